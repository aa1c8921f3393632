//! The future every store method returns.
//!
//! Store traits are used as trait objects (`Arc<dyn Storage>`), so their
//! methods return a boxed, `Send` future rather than `impl Future`; the
//! ledger, the task store and the stores themselves all name it from here.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future: what the store traits' methods return, so they can
/// be used as `Arc<dyn Storage>`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
