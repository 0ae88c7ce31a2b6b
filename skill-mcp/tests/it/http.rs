//! Streamable HTTP at `/mcp` beside `/v1` on one loopback listener, with rmcp's client.

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use skill_mcp::McpConfig;
use skill_runtime::http::{App, HttpConfig};

use crate::common::{Fixture, read_everything};

#[tokio::test(flavor = "multi_thread")]
async fn http_client_lists_and_reads_every_file_next_to_the_api() {
    let fx = Fixture::new();
    let (listener, addr) = skill_runtime::http::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mount = App::mounts().mount(
        "/mcp",
        skill_mcp::http_mounted(fx.engine.clone(), McpConfig::default(), vec![]),
    );
    let app = App::with_mounts(fx.engine.clone(), HttpConfig::default(), mount);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(skill_runtime::http::serve(listener, app, async {
        let _ = stopped.await;
    }));
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap();
    let (skills, files) = read_everything(&client).await;
    assert!(
        skills > 10 && files > skills,
        "{skills} skills, {files} files"
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 7);
    client.cancel().await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_token_mcp_needs_it_like_the_api() {
    let fx = Fixture::new();
    let (listener, addr) = skill_runtime::http::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mount = App::mounts().mount(
        "/mcp",
        skill_mcp::http_mounted(fx.engine.clone(), McpConfig::default(), vec![]),
    );
    let config = HttpConfig {
        token: Some("s3cret".into()),
        ..HttpConfig::default()
    };
    let app = App::with_mounts(fx.engine.clone(), config, mount);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(skill_runtime::http::serve(listener, app, async {
        let _ = stopped.await;
    }));
    let refused = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await;
    assert!(refused.is_err());
    let transport = StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            format!("http://{addr}/mcp"),
        )
        .auth_header("s3cret"),
    );
    let client = ().serve(transport).await.unwrap();
    assert!(!client.list_all_skills().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
