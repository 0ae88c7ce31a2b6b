//! When the host hangs up standard input: `mcp` stops at most the stdio drain
//! (`skill_mcp::STDIO_CLOSE_DRAIN`) after its input closed, whatever is still unread.
//!
//! The transport's own drain starts when it reads the end of the input, which it reaches
//! only after the messages before it: a host that wrote its messages and closed the pipe
//! while the engine was still loading (or while answers waited for room in a full output
//! pipe) kept the server running that much longer (7.0 s for a 5 s drain). A thread waits in
//! `poll(2)` for the hang-up of the input (`POLLHUP` on a pipe, `POLLRDHUP` on a socket),
//! which the kernel reports as soon as the writer is gone, whether or not data is still
//! buffered, without reading anything; the instant is the drain's start. Started first thing,
//! it sees a hang-up during the engine's start too. An input that never hangs up (a file,
//! a terminal, `/dev/null`) leaves it waiting, and the transport's end of input rules.

use std::time::Instant;

/// Completes [`skill_mcp::STDIO_CLOSE_DRAIN`] after standard input hangs up (never where
/// that cannot be seen). Call it before the engine starts; it runs inside the runtime.
pub(crate) fn drained_after_hangup() -> impl std::future::Future<Output = ()> {
    let (tx, rx) = tokio::sync::oneshot::channel::<Instant>();
    let watcher = std::thread::Builder::new()
        .name("stdin-hangup".to_owned())
        .spawn(move || {
            if let Some(at) = wait_for_hangup() {
                let _ = tx.send(at);
            }
        });
    if let Err(e) = watcher {
        tracing::warn!(error = %e, "cannot watch standard input for a hang-up: the transport's drain alone applies");
    }
    async move {
        match rx.await {
            Ok(at) => {
                tokio::time::sleep_until((at + skill_mcp::STDIO_CLOSE_DRAIN).into()).await;
                tracing::warn!(
                    "the client closed its input {} s ago and reads no more: stopping with answers unwritten",
                    skill_mcp::STDIO_CLOSE_DRAIN.as_secs()
                );
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
}

/// Blocks until standard input hangs up; when it did (`None` where it cannot be watched).
fn wait_for_hangup() -> Option<Instant> {
    #[cfg(unix)]
    {
        use rustix::event::{PollFd, PollFlags, poll};
        let stdin = std::io::stdin();
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let wanted = PollFlags::RDHUP;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let wanted = PollFlags::empty();
        loop {
            // `POLLHUP` and `POLLERR` are reported whatever is asked; readable data is not
            // asked for, so a pipe with data waiting does not wake this.
            let mut fds = [PollFd::new(&stdin, wanted)];
            match poll(&mut fds, None) {
                Ok(_) => {
                    let got = fds[0].revents();
                    if got.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL | wanted) {
                        return Some(Instant::now());
                    }
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return None,
            }
        }
    }
    #[cfg(not(unix))]
    None
}
