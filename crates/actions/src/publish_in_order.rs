//! Publishing in commit order without an event log (SQLite, one process). A transaction's
//! events are handed over right after its commit, inside the writing turn
//! (`storage::OnCommit::Run`), so they reach this queue in commit order; a thread of its own
//! delivers them, so that the turn is not held for the delivery (about 1.5 ms for a message to
//! 1,000 recipients with two queues each) and the next transaction commits meanwhile. The
//! action waits for its events' delivery ([`Delivered`]) before it lets a register in
//! (`EventHub`'s gate), as when it delivered them itself.

use parley_events::{Bus, Event};
use parley_storage::CommitHook;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;
use tokio::sync::oneshot;

/// The events of one transaction, and who waits for their delivery.
type Handed = (Arc<Vec<Event>>, oneshot::Sender<()>);

/// The queue of the delivering thread (a `Sender` is shared between threads as it is);
/// dropping it ends the thread.
pub(crate) struct InOrder {
    queue: mpsc::Sender<Handed>,
}

/// Resolves once a transaction's events have been delivered.
pub(crate) struct Delivered(oneshot::Receiver<()>);

impl Delivered {
    /// Waits for the delivery (at once if the thread is gone: nothing more will come).
    pub(crate) async fn wait(self) {
        let _ = self.0.await;
    }
}

impl InOrder {
    /// Starts the delivering thread: each transaction's events go to the organization cache
    /// (`note_delivered`) and the bus, in the order handed over.
    pub(crate) fn start(
        bus: Arc<dyn Bus>,
        realm_cache: Arc<crate::realm_cache::RealmCache>,
    ) -> std::io::Result<InOrder> {
        let (queue, handed) = mpsc::channel::<Handed>();
        std::thread::Builder::new()
            .name("parley-publish".into())
            .spawn(move || {
                for (events, delivered) in handed {
                    let published = catch_unwind(AssertUnwindSafe(|| {
                        realm_cache.note_delivered(&events);
                        bus.publish(&events);
                    }));
                    if published.is_err() {
                        tracing::error!("delivering a transaction's events panicked");
                    }
                    let _ = delivered.send(());
                }
            })?;
        Ok(InOrder { queue })
    }

    /// Queues `events` for delivery after those handed over before (call it in commit order);
    /// the returned work does it, and [`Delivered`] says when they are delivered.
    pub(crate) fn hand_over(&self, events: &Arc<Vec<Event>>) -> (CommitHook, Delivered) {
        let (done, delivered) = oneshot::channel();
        let (queue, events) = (self.queue.clone(), Arc::clone(events));
        let hand = Box::new(move || {
            // A send fails only once the thread is gone; the waiter then returns at once.
            let _ = queue.send((events, done));
        });
        (hand, Delivered(delivered))
    }
}
