//! skill-mcp end to end against rmcp's own client: over an in-process duplex (the byte
//! stream stdio uses) and over streamable HTTP on loopback, with the bundled packs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
mod errors;
mod extension;
mod http;
#[cfg(target_os = "linux")]
mod limits;
mod malformed;
mod output_schema;
#[cfg(target_os = "linux")]
mod sessions;
mod tools_and_prompts;
