//! How the actions' [`Context`] is put together: the context of `crate::context` with what
//! follows every committed write, outgoing webhooks. It stands apart because those webhooks
//! send messages, which are writes: the write path (`Context::write`, which every action
//! takes) calls them through a function pointer set here instead of importing them.

use crate::context::{Context, RealmAddress};
use parley_storage::Db;

impl Context {
    /// A context over this database and address, with the default rate limits and the
    /// outgoing webhooks of committed messages.
    pub fn new(db: Db, realm: RealmAddress) -> Self {
        Context::with_hook(db, realm, crate::outgoing_webhooks::after_commit)
    }
}
