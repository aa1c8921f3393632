//! [`Error`]: why serving stopped, as predicates with the cause behind
//! `source()`.
//!
//! Nothing a client sends ends a server: a malformed message is answered with
//! a JSON-RPC error by rmcp and the connection goes on, and a failed call is a
//! tool result. What is left is the connection itself failing.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Closed,
    Handshake,
    Internal,
}

/// Why a server stopped serving.
pub struct Error {
    kind: Kind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    pub(crate) fn handshake(e: rmcp::service::ServerInitializeError) -> Self {
        let kind = match &e {
            rmcp::service::ServerInitializeError::ConnectionClosed(_) => Kind::Closed,
            _ => Kind::Handshake,
        };
        Error::new(
            kind,
            format!("the MCP handshake did not complete: {e}"),
            Some(Box::new(e)),
        )
    }

    pub(crate) fn internal(e: tokio::task::JoinError) -> Self {
        Error::new(
            Kind::Internal,
            format!("the connection's task ended abnormally: {e}"),
            Some(Box::new(e)),
        )
    }

    fn new(kind: Kind, message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Error { kind, message, source }
    }

    /// The client closed the connection before the handshake ended.
    pub fn is_closed(&self) -> bool {
        self.kind == Kind::Closed
    }

    /// The client's first messages were not an MCP opening (`initialize` or
    /// a request carrying 2026-07-28 metadata), or the transport failed
    /// while answering them.
    pub fn is_handshake(&self) -> bool {
        self.kind == Kind::Handshake
    }

    /// The task serving the connection ended abnormally.
    pub fn is_internal(&self) -> bool {
        self.kind == Kind::Internal
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|s| s as &(dyn std::error::Error + 'static))
    }
}
