//! Stopping on a signal: the one place `serve` and `mcp` catch SIGINT and SIGTERM.

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM. The handlers are installed when this
/// is called, not when the future is first polled (the server's loop may take a while to
/// poll it), so call it before announcing readiness. Runs inside the Tokio runtime.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (interrupt, term) = {
        use tokio::signal::unix::{SignalKind, signal};
        let install = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "cannot catch {name}: it stops the server without a graceful shutdown");
                None
            }
        };
        (
            install(SignalKind::interrupt(), "SIGINT"),
            install(SignalKind::terminate(), "SIGTERM"),
        )
    };
    async move {
        #[cfg(unix)]
        {
            async fn recv(s: Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = recv(interrupt) => {}
                () = recv(term) => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("shutting down: finishing in-flight requests");
    }
}
