//! Giving memory back once the server goes quiet. Under load the process grows: SQLite's page
//! caches fill towards their budget and the allocator keeps what request handlers freed, for
//! the next burst. When no request has been answered for a while, the idle connections' caches
//! are emptied and the allocator's free memory is returned to the system, so a server at rest
//! holds about what it held when it started.

use parley_storage::Db;
use std::time::Duration;

/// How long the server must answer nothing before its memory is given back.
pub const IDLE_AFTER: Duration = Duration::from_secs(10);

/// Runs until aborted: every `idle_after`, if requests were answered since the last release but
/// none in the last interval, releases the memory (on a blocking thread).
pub fn spawn_release_when_idle(db: Db, idle_after: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut seen = parley_api::ops::requests_served();
        let mut released_at = seen;
        loop {
            tokio::time::sleep(idle_after).await;
            let now = parley_api::ops::requests_served();
            if went_idle(seen, now, released_at) {
                released_at = now;
                let db = db.clone();
                let released = tokio::task::spawn_blocking(move || release(&db)).await;
                if let Ok(Err(e)) = released {
                    tracing::warn!(error = %e, "cannot empty the idle database caches");
                }
            }
            seen = now;
        }
    })
}

/// Whether the server went idle after working: requests were answered since the last release
/// (`released_at`), but none since the last look (`seen`). A server that stays idle releases
/// once, not at every look.
fn went_idle(seen: u64, now: u64, released_at: u64) -> bool {
    now == seen && now != released_at
}

/// Empties the idle connections' caches and hands the allocator's free memory back.
fn release(db: &Db) -> Result<(), parley_storage::StorageError> {
    let shrunk = db.shrink_idle_caches()?;
    trim_allocator();
    tracing::debug!(connections = shrunk, "idle: memory given back");
    Ok(())
}

/// Returns the free memory glibc keeps in its arenas to the system (`malloc_trim`).
fn trim_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::went_idle;

    #[test]
    fn memory_is_released_once_after_work_stops() {
        // Busy: requests since the last look.
        assert!(!went_idle(10, 25, 0));
        // Quiet after work: release.
        assert!(went_idle(25, 25, 0));
        // Still quiet, released already: nothing more.
        assert!(!went_idle(25, 25, 25));
        // Quiet since start: nothing to give back.
        assert!(!went_idle(0, 0, 0));
    }
}
