//! Wall-clock timing: warm-up runs, then timed runs, reported by their median.

use std::time::{Duration, Instant};

/// Time `f` once, returning its duration and result (dropped by the caller, untimed).
fn timed<T>(f: &mut impl FnMut() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

/// Time a baseline `a` and a contender `b`: each runs once untimed (warm-up), then they run
/// alternately `iterations` times each (at least once), so that a change in machine load
/// affects both alike. Returns each one's median duration and the result of its last run.
/// Each result is dropped after the clock stops and before the same side runs again, so
/// dropping is not measured and each run can reuse the memory the last one freed (holding
/// a result across the next run made every run allocate afresh, and its time then swung
/// with the allocator's state: a threefold swing for a run that allocates 640 KB).
pub fn measure_pair<A, B>(
    iterations: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> ((Duration, A), (Duration, B)) {
    drop(a());
    drop(b());
    let n = iterations.max(1);
    let mut times_a = Vec::with_capacity(n);
    let mut times_b = Vec::with_capacity(n);
    let (t, mut last_a) = timed(&mut a);
    times_a.push(t);
    let (t, mut last_b) = timed(&mut b);
    times_b.push(t);
    for _ in 1..n {
        drop(last_a);
        let (t, out) = timed(&mut a);
        times_a.push(t);
        last_a = out;
        drop(last_b);
        let (t, out) = timed(&mut b);
        times_b.push(t);
        last_b = out;
    }
    (
        (median(&mut times_a), last_a),
        (median(&mut times_b), last_b),
    )
}

/// The median of some durations (mean of the two middle ones for an even count; zero for
/// none).
pub fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    let n = times.len();
    match n {
        0 => Duration::ZERO,
        _ if n % 2 == 1 => times[n / 2],
        _ => (times[n / 2 - 1] + times[n / 2]) / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn median_odd_and_even() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut [ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(
            median(&mut [ms(4), ms(1), ms(2), ms(3)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&mut []), Duration::ZERO);
    }

    #[test]
    fn pair_warms_up_then_alternates() {
        let log = RefCell::new(Vec::new());
        let ((_, last_a), (_, last_b)) = measure_pair(
            3,
            || {
                log.borrow_mut().push('a');
                log.borrow().len()
            },
            || {
                log.borrow_mut().push('b');
                log.borrow().len()
            },
        );
        assert_eq!(log.borrow().iter().collect::<String>(), "abababab");
        assert_eq!((last_a, last_b), (7, 8));
    }
}
