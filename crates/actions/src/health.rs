//! Health and readiness, for load balancers and orchestrators: `GET /health` answers while the
//! process serves; `GET /ready` also needs the database to answer with every migration applied.

use crate::context::Context;
use std::time::Duration;

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

/// How long a probe waits for a database connection before it answers "unreachable".
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One pooled connection (waiting at most [`PROBE_TIMEOUT`]) and one read of the migrations
/// table: cheap enough for a probe every second.
pub async fn check_ready(ctx: &Context) -> Result<(), NotReady> {
    let result = ctx.db.migrations_pending(PROBE_TIMEOUT).await;
    match result {
        Ok(false) => Ok(()),
        Ok(true) => Err(NotReady::MigrationsPending),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check: database unreachable");
            Err(NotReady::DatabaseUnreachable)
        }
    }
}
