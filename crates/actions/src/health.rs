//! Health and readiness, for load balancers and orchestrators: `GET /health` answers while the
//! process serves; `GET /ready` also needs the database to answer with every migration applied.

use crate::context::Context;

/// Why the server is not ready; the cause itself goes to the log, not to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotReady {
    /// No connection, or the database does not answer.
    DatabaseUnreachable,
    /// The schema is behind the binary.
    MigrationsPending,
}

impl NotReady {
    /// A short reason for the answer.
    pub fn reason(self) -> &'static str {
        match self {
            NotReady::DatabaseUnreachable => "database unreachable",
            NotReady::MigrationsPending => "database migrations pending",
        }
    }
}

/// One pooled connection and one read of the migrations table: cheap enough for a probe every
/// second.
pub async fn check_ready(ctx: &Context) -> Result<(), NotReady> {
    let result = ctx
        .db
        .run(|conn| -> Result<bool, parley_storage::StorageError> {
            parley_storage::migrate::has_pending(conn)
        })
        .await;
    match result {
        Ok(false) => Ok(()),
        Ok(true) => Err(NotReady::MigrationsPending),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check: database unreachable");
            Err(NotReady::DatabaseUnreachable)
        }
    }
}
