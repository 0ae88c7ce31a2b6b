//! skill-http's integration tests, one binary: the HTTP server against hostile clients and
//! its OpenAPI document (`http`), skills the trust policy excluded refused by every door and
//! answers' paths relative to their source (`excluded`); `common` holds the helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod excluded;
mod http;
