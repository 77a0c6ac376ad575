//! The mail transports of the server: SMTP when `--smtp-url` is given, else an outbox directory
//! of `.eml` files that an operator can read or hand to another mailer.

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{Message, SmtpTransport, Transport};
use parley_actions::mail::{Mail, Mailer};
use std::path::PathBuf;

fn message(from: &str, mail: &Mail) -> Result<Message, String> {
    let from: Mailbox = from.parse().map_err(|e| format!("sender {from}: {e}"))?;
    let to: Mailbox = mail
        .to
        .parse()
        .map_err(|e| format!("recipient {}: {e}", mail.to))?;
    Message::builder()
        .from(from)
        .to(to)
        .subject(mail.subject.clone())
        .body(mail.body.clone())
        .map_err(|e| e.to_string())
}

/// Writes each message as `<outbox>/<unix time>-<uuid>.eml`.
pub struct OutboxMailer {
    /// The directory.
    pub dir: PathBuf,
    /// Sender address.
    pub from: String,
}

impl Mailer for OutboxMailer {
    fn send(&self, mail: &Mail) -> Result<(), String> {
        let message = message(&self.from, mail)?;
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let name = format!(
            "{}-{}.eml",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default(),
            uuid::Uuid::new_v4()
        );
        std::fs::write(self.dir.join(name), message.formatted()).map_err(|e| e.to_string())
    }
}

/// Sends through an SMTP relay (plain SMTP, optionally with a login).
pub struct SmtpMailer {
    transport: SmtpTransport,
    from: String,
}

impl SmtpMailer {
    /// A transport for `smtp://[user:password@]host[:port]`.
    pub fn new(url: &url::Url, from: String) -> Self {
        let host = url.host_str().unwrap_or("localhost");
        let mut builder = SmtpTransport::builder_dangerous(host).port(url.port().unwrap_or(25));
        if !url.username().is_empty() {
            builder = builder.credentials(Credentials::new(
                url.username().to_owned(),
                url.password().unwrap_or_default().to_owned(),
            ));
        }
        SmtpMailer {
            transport: builder.build(),
            from,
        }
    }
}

impl Mailer for SmtpMailer {
    fn send(&self, mail: &Mail) -> Result<(), String> {
        let message = message(&self.from, mail)?;
        self.transport
            .send(&message)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_outbox_holds_one_file_per_message() {
        let dir = tempfile::tempdir().unwrap();
        let mailer = OutboxMailer {
            dir: dir.path().join("outbox"),
            from: "noreply@parley.test".into(),
        };
        mailer
            .send(&Mail {
                to: "ann@example.com".into(),
                subject: "Hello".into(),
                body: "Follow http://x/link".into(),
            })
            .unwrap();
        let files: Vec<_> = std::fs::read_dir(dir.path().join("outbox"))
            .unwrap()
            .collect();
        assert_eq!(files.len(), 1);
        let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
        assert!(text.contains("To: ann@example.com"));
        assert!(text.contains("Subject: Hello"));
        assert!(text.contains("http://x/link"));
        assert!(mailer
            .send(&Mail {
                to: "not an address".into(),
                subject: "x".into(),
                body: "x".into()
            })
            .is_err());
    }
}
