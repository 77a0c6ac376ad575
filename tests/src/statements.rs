//! Counting the database statements of requests (issue 15: on PostgreSQL each statement is a
//! round trip with its parsing and planning). Every statement a test's own database runs is
//! counted through diesel's instrumentation, per connection URL, so that the tests running
//! beside it in the same process do not count. With `PRINT_STATEMENTS` set, each counted
//! statement is printed (the start of its SQL and binds), to see what a request runs.

use crate::TestApp;
use diesel::connection::{set_default_instrumentation, Instrumentation, InstrumentationEvent};
use parley_storage::DatabaseUrl;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

/// Every connection the process opened since counting started, by URL, with its statements.
static CONNECTIONS: Mutex<Vec<(String, Arc<AtomicU64>)>> = Mutex::new(Vec::new());

/// Counts one connection's statements.
struct Counter(Option<Arc<AtomicU64>>);

impl Instrumentation for Counter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartEstablishConnection { url, .. } => {
                let counter = Arc::new(AtomicU64::new(0));
                CONNECTIONS
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((url.to_owned(), counter.clone()));
                self.0 = Some(counter);
            }
            InstrumentationEvent::StartQuery { query, .. } => {
                if std::env::var("PRINT_STATEMENTS").is_ok() && self.0.is_some() {
                    eprintln!(
                        "STMT {}",
                        query.to_string().chars().take(150).collect::<String>()
                    );
                }
                if let Some(counter) = &self.0 {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
            _ => {}
        }
    }
}

/// Counts statements on every connection opened from now on: call it before the app starts,
/// so that all of its pool is counted.
pub fn count_statements() {
    static START: Once = Once::new();
    START.call_once(|| {
        set_default_instrumentation(|| Some(Box::new(Counter(None))))
            .expect("diesel instrumentation");
    });
}

/// Statements run so far on the connections to `app`'s database.
pub fn statements(app: &TestApp) -> u64 {
    let wanted = match app.ctx.db.url() {
        DatabaseUrl::Sqlite(path) => path.to_string_lossy().into_owned(),
        DatabaseUrl::Postgres(url) => url.split('?').next().unwrap_or(url).to_owned(),
    };
    CONNECTIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter(|(url, _)| url.split('?').next() == Some(wanted.as_str()))
        .map(|(_, counter)| counter.load(Ordering::Relaxed))
        .sum()
}

/// The fewest statements one call of `request` took in three: the node's own background work
/// (the event log's heartbeat on PostgreSQL), a rate-limit lease (one request in ten) and the
/// pool's test of a connection idle for a second can fall into one call, not into all three.
pub async fn fewest_statements<F, Fut>(app: &TestApp, mut request: F) -> u64
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let before = statements(app);
        request().await;
        fewest = fewest.min(statements(app) - before);
    }
    fewest
}
