//! [`ServeError`]: why serving stopped, as predicates with the cause behind
//! `source()`.
//!
//! Nothing a client sends ends a server: a malformed message is answered with
//! a JSON-RPC error by rmcp and the connection goes on, and a failed call is a
//! tool result. What is left is the connection itself failing.

toolgate_error::opaque_error! {
    /// Why a server stopped serving.
    pub struct ServeError(Box<ServeErrorImpl>);
    enum Kind {
        /// The client closed the connection before the handshake ended.
        Closed => is_closed,
        /// The client's first messages were not an MCP opening (`initialize` or
        /// a request carrying 2026-07-28 metadata), or the transport failed
        /// while answering them.
        Handshake => is_handshake,
        /// The task serving the connection ended abnormally.
        Internal => is_internal,
    }
}

impl ServeError {
    pub(crate) fn handshake(e: rmcp::service::ServerInitializeError) -> Self {
        let kind = match &e {
            rmcp::service::ServerInitializeError::ConnectionClosed(_) => Kind::Closed,
            _ => Kind::Handshake,
        };
        ServeError::new(
            kind,
            format!("the MCP handshake did not complete: {e}"),
            Some(Box::new(e)),
        )
    }

    pub(crate) fn internal(e: tokio::task::JoinError) -> Self {
        ServeError::new(
            Kind::Internal,
            format!("the connection's task ended abnormally: {e}"),
            Some(Box::new(e)),
        )
    }
}
