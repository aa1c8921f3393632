//! The transports: stdio (and any byte stream), and streamable HTTP.
//!
//! Each connection gets its own [`Connection`](crate::Connection) and so its
//! own task. Over HTTP that is one per session: protocol revisions up to
//! 2025-11-25 keep a session (`Mcp-Session-Id`) from `initialize` on;
//! 2026-07-28 has no sessions, so each of its requests is a connection of its
//! own, and calls that should share a task name it (`gate/task`).

use std::future::Future;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::{Connection, McpServer, ServeError};

/// How long the HTTP server waits after a failed accept (out of file
/// descriptors, say) before accepting again, so a lasting failure does not
/// spin.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// The streamable HTTP service of a server, as rmcp builds it: a tower
/// service to mount in any HTTP stack (axum, hyper).
pub type HttpService = StreamableHttpService<Connection, LocalSessionManager>;

impl McpServer {
    /// Serves one client on the process's stdin and stdout until it closes
    /// them. Logs must go to stderr: stdout carries the protocol.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        self.serve(rmcp::transport::stdio_pipes()).await
    }

    /// Serves one client over a byte stream (`(reader, writer)`: a pipe, a
    /// socket, an in-memory duplex) until it closes it.
    pub async fn serve<R, W>(&self, transport: (R, W)) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .connection()
            .serve(transport)
            .await
            .map_err(ServeError::handshake)?;
        running.waiting().await.map(drop).map_err(ServeError::internal)
    }

    /// The streamable HTTP service, for mounting in an HTTP stack of one's
    /// own. `config` is rmcp's: allowed hosts (loopback only by default),
    /// sessions for the revisions that have them, keep-alive, body limits.
    pub fn http_service(&self, config: StreamableHttpServerConfig) -> HttpService {
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// Serves streamable HTTP on `listener` (every path answers MCP; clients
    /// are usually given `http://ADDR/mcp`) until `shutdown` completes, then
    /// ends the sessions, lets requests in flight finish and returns.
    /// Connections are HTTP/1.1 or HTTP/2. Only loopback `Host` headers are
    /// accepted; for a public address mount [`http_service`](Self::http_service)
    /// with rmcp's `allowed_hosts`.
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let config = StreamableHttpServerConfig::default();
        let stop = config.cancellation_token.clone();
        let service = TowerToHyperService::new(self.http_service(config));
        let graceful = GracefulShutdown::new();
        let builder = Builder::new(TokioExecutor::new());
        tokio::pin!(shutdown);
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // A connection that failed before it was accepted
                    // (reset, out of descriptors for a moment) is that
                    // client's loss, not the server's end.
                    Err(e) => {
                        tracing::warn!(target: "gate::mcp", error = %e, "accepting a connection failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service.clone())
                .into_owned();
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(target: "gate::mcp", error = %e, "an HTTP connection ended with an error");
                }
            });
        }
        stop.cancel();
        graceful.shutdown().await;
        Ok(())
    }
}
