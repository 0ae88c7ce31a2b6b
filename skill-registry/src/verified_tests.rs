//! Tests of the stamp cache's margin and bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn stamp_changed_at(at: SystemTime) -> Stamp {
    let d = at.duration_since(SystemTime::UNIX_EPOCH).unwrap();
    Stamp {
        len: 1,
        mtime: (0, 0),
        ctime: (
            i64::try_from(d.as_secs()).unwrap(),
            i64::from(d.subsec_nanos()),
        ),
        ino: 1,
        dev: 1,
    }
}

/// A file changed exactly the margin before the hash has settled; one nanosecond later it
/// is racily clean and its stamp vouches for nothing.
#[test]
fn the_safety_margin_is_met_at_its_edge_and_not_a_nanosecond_inside() {
    let changed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let stamp = stamp_changed_at(changed);
    assert!(settled(&stamp, changed + SAFETY_MARGIN));
    assert!(!settled(
        &stamp,
        changed + SAFETY_MARGIN - Duration::from_nanos(1)
    ));
    assert!(!settled(&stamp, changed));
}

/// A change time before the epoch never settles (it cannot be compared).
#[test]
fn a_change_time_before_the_epoch_never_settles() {
    let mut stamp = stamp_changed_at(SystemTime::UNIX_EPOCH);
    stamp.ctime = (-5, 0);
    assert!(!settled(&stamp, SystemTime::now()));
}

/// The cache holds `MAX_STAMPS` files; the next new one starts it again empty, while a
/// file already kept is updated in place.
#[test]
fn the_cache_holds_max_stamps_files_and_then_starts_again() {
    let stamps = Stamps::default();
    let entry = Entry {
        stamp: stamp_changed_at(SystemTime::UNIX_EPOCH),
        sha256: Sha256([0; 32]),
    };
    for i in 0..MAX_STAMPS {
        stamps.insert(Path::new(&format!("/f{i}")), entry);
    }
    assert_eq!(stamps.len(), MAX_STAMPS);
    stamps.insert(Path::new("/f0"), entry);
    assert_eq!(stamps.len(), MAX_STAMPS);
    stamps.insert(Path::new("/new"), entry);
    assert_eq!(stamps.len(), 1);
}
