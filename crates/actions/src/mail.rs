//! Outgoing mail. The server wires a real transport (SMTP when configured, else an outbox
//! directory); tests keep what was sent in memory.

use std::sync::Mutex;

/// One message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// Recipient address.
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
}

/// Somewhere mail goes. Sending is blocking; actions call it off the async executor.
pub trait Mailer: Send + Sync {
    /// Sends (or stores) one message; the error says why it could not.
    fn send(&self, mail: &Mail) -> Result<(), String>;
}

/// Keeps mail in memory: the default when nothing else is configured, and what tests read.
#[derive(Debug, Default)]
pub struct MemoryMailer {
    sent: Mutex<Vec<Mail>>,
}

impl MemoryMailer {
    /// Everything sent so far.
    pub fn sent(&self) -> Vec<Mail> {
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Mailer for MemoryMailer {
    fn send(&self, mail: &Mail) -> Result<(), String> {
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(mail.clone());
        Ok(())
    }
}
