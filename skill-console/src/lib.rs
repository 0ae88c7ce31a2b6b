//! The console: a web page for operators and pack authors, served at [`CONSOLE_PATH`] on the
//! server's own listener (issue 48).
//!
//! This crate owns the page's assets (plain HTML, CSS and JavaScript under `assets/`, embedded
//! in the binary with `include_bytes!`: no CDN, no Node, no build step) and the tower service
//! that serves them ([`service`]). The page itself holds no data: it reads everything from the
//! JSON API under `/v1` with `fetch`, so it sees exactly what any client of the API sees, and
//! reading it needs what reading the API needs (nothing, or the bearer token for the calls
//! that act, which the user types into the page; it is kept in `sessionStorage` only).
//!
//! Every answer carries [`CONTENT_SECURITY_POLICY`]: scripts, styles, images and connections
//! from the server itself only, so the page can make no request outside it.
//!
//! skill-server mounts it with `skill_http::Mounts::mount_with(CONSOLE_PATH,
//! skill_console::service(), skill_console::needs_token)`.

#![warn(unreachable_pub)]

mod assets;
mod serve;

pub use serve::{Body, CONSOLE_PATH, CONTENT_SECURITY_POLICY, needs_token, service};
