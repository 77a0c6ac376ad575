//! The actions layer's one error type.

use parley_domain::RequestError;
use parley_storage::StorageError;

/// Why an action failed: the caller's fault (answered with its code) or ours (logged and
/// answered with a generic server error).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The request was wrong or not allowed.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Anything else that is not the client's fault.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Shorthand for results of actions.
pub type ActionResult<T> = Result<T, ActionError>;
