//! A PostgreSQL connection that sleeps until a `NOTIFY` arrives.
//!
//! Diesel's connection can be asked whether notifications arrived but not waited on, so a
//! listener built on it had to ask again and again: every 2 ms, about 500 wake-ups and 2.6 % of
//! a core a second on an idle server. This one holds a libpq connection of its own (the libpq
//! and connection string diesel uses, so `sslmode` and every other setting mean the same) and
//! waits in `poll(2)` on its socket until PostgreSQL sends something or the timeout passes.

use crate::error::StorageError;
use pq_sys as pq;
use std::ffi::{CStr, CString};
use std::ptr::NonNull;
use std::time::Duration;

/// A connection listening on one `NOTIFY` channel.
pub struct PgListen {
    conn: NonNull<pq::PGconn>,
}

// SAFETY: a libpq connection may move between threads as long as one thread at a time uses it;
// `PgListen` is not `Sync` and every use takes `&mut self` or happens while it is owned.
unsafe impl Send for PgListen {}

impl PgListen {
    /// Connects to `url` (a PostgreSQL URL or key-value string) and listens on `channel` (an
    /// SQL identifier chosen by the caller, never user input).
    pub fn connect(url: &str, channel: &str) -> Result<PgListen, StorageError> {
        let info = CString::new(url)
            .map_err(|_| StorageError::Connect("the database URL holds a NUL byte".into()))?;
        // SAFETY: `info` is a valid C string for the call; libpq copies what it needs.
        let raw = unsafe { pq::PQconnectdb(info.as_ptr()) };
        let conn = NonNull::new(raw)
            .ok_or_else(|| StorageError::Connect("libpq could not allocate a connection".into()))?;
        // Owned from here, so that every return below closes the connection.
        let listen = PgListen { conn };
        // SAFETY: `conn` is live; `log_notice` takes no argument and outlives it.
        unsafe { pq::PQsetNoticeProcessor(conn.as_ptr(), Some(log_notice), std::ptr::null_mut()) };
        // SAFETY: `conn` is a live connection owned by `listen`.
        if unsafe { pq::PQstatus(conn.as_ptr()) } != pq::ConnStatusType::CONNECTION_OK {
            return Err(listen.failure());
        }
        listen.execute(&format!("LISTEN {channel}"))?;
        Ok(listen)
    }

    /// Waits up to `timeout` for notifications and returns their payloads, oldest first (none
    /// when the time passed first). An error means the connection is lost.
    pub fn wait(&mut self, timeout: Duration) -> Result<Vec<String>, StorageError> {
        let arrived = self.take()?;
        if !arrived.is_empty() {
            return Ok(arrived);
        }
        // SAFETY: `conn` is live; PQsocket only reads it.
        let socket = unsafe { pq::PQsocket(self.conn.as_ptr()) };
        if socket < 0 {
            return Err(self.failure());
        }
        let micros = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX / 2);
        // SAFETY: both calls take plain integers; the socket stays open while `self` lives.
        let ready = unsafe {
            let end = pq::PQgetCurrentTimeUSec().saturating_add(micros);
            pq::PQsocketPoll(socket, 1, 0, end)
        };
        match ready {
            0 => Ok(Vec::new()),
            r if r > 0 => self.take(),
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
                Ok(Vec::new())
            }
            _ => Err(StorageError::Connect(format!(
                "PostgreSQL listener: waiting on the socket: {}",
                std::io::Error::last_os_error()
            ))),
        }
    }

    /// Reads what arrived on the socket without waiting and returns the notifications' payloads.
    fn take(&mut self) -> Result<Vec<String>, StorageError> {
        let conn = self.conn.as_ptr();
        // SAFETY: `conn` is live and used by this thread only.
        if unsafe { pq::PQconsumeInput(conn) } == 0 {
            return Err(self.failure());
        }
        let mut payloads = Vec::new();
        loop {
            // SAFETY: as above; a non-null notification is ours to read and free.
            let notify = unsafe { pq::PQnotifies(conn) };
            if notify.is_null() {
                return Ok(payloads);
            }
            // SAFETY: libpq sets `extra` to a valid C string (empty without a payload).
            let payload = unsafe { CStr::from_ptr((*notify).extra) };
            payloads.push(payload.to_string_lossy().into_owned());
            // SAFETY: freed once, after its last use.
            unsafe { pq::PQfreemem(notify.cast()) };
        }
    }

    /// Runs one statement that returns no rows.
    fn execute(&self, sql: &str) -> Result<(), StorageError> {
        let sql = CString::new(sql)
            .map_err(|_| StorageError::Connect("a statement holds a NUL byte".into()))?;
        // SAFETY: `conn` is live and `sql` a valid C string; the result is cleared once
        // (PQclear accepts null).
        let ok = unsafe {
            let result = pq::PQexec(self.conn.as_ptr(), sql.as_ptr());
            let ok = !result.is_null()
                && pq::PQresultStatus(result) == pq::ExecStatusType::PGRES_COMMAND_OK;
            pq::PQclear(result);
            ok
        };
        if ok {
            Ok(())
        } else {
            Err(self.failure())
        }
    }

    /// The connection's last error as a storage error.
    fn failure(&self) -> StorageError {
        // SAFETY: PQerrorMessage returns a string owned by the live connection, copied here.
        let message = unsafe { CStr::from_ptr(pq::PQerrorMessage(self.conn.as_ptr())) };
        StorageError::Connect(format!(
            "PostgreSQL listener: {}",
            message.to_string_lossy().trim_end()
        ))
    }
}

/// Where libpq's notices go (by default to standard error): the log. A connection ended by
/// the server (the database dropped, a restart) says so here before the listener reports it
/// lost.
unsafe extern "C" fn log_notice(_: *mut std::ffi::c_void, message: *const std::ffi::c_char) {
    if !message.is_null() {
        // SAFETY: libpq passes a valid C string for the duration of the call.
        let message = unsafe { CStr::from_ptr(message) };
        tracing::debug!(message = %message.to_string_lossy().trim_end(), "PostgreSQL listener notice");
    }
}

impl Drop for PgListen {
    fn drop(&mut self) {
        // SAFETY: the connection is finished once, here, and never used after.
        unsafe { pq::PQfinish(self.conn.as_ptr()) }
    }
}
