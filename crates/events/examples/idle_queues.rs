//! Measures what idle queues cost: registers 50,000 queues (two per user), prints the resident
//! memory before and after, then times delivering a message to 1,000 recipients.
//!
//! Run with `cargo run --release -p parley-events --example idle_queues`.

use parley_domain::UserId;
use parley_events::{Engine, EngineConfig, Event, MessagePayload, MessageRecipient, QueueOptions};
use std::time::Instant;

/// Resident set size in KiB, from /proc (Linux only; 0 elsewhere).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    const QUEUES: i64 = 50_000;
    let engine = Engine::new(EngineConfig::default());
    let before = rss_kib();
    let start = Instant::now();
    for i in 0..QUEUES {
        let mut options = QueueOptions::new(UserId(i / 2));
        options.apply_markdown = true;
        options.client_name = "ZulipElectron".to_owned();
        options.empty_topic_display_name = "general chat".to_owned();
        engine.register(options);
    }
    let after = rss_kib();
    println!(
        "{} queues registered in {:?}; RSS {} KiB -> {} KiB ({} bytes per queue)",
        engine.queue_count(),
        start.elapsed(),
        before,
        after,
        (after.saturating_sub(before) * 1024) / QUEUES as u64
    );

    let payload = MessagePayload {
        message: serde_json::Map::new(),
        content_markdown: "hello".to_owned(),
        content_html: "<p>hello</p>".to_owned(),
        avatar_url: None,
        gravatar_url: String::new(),
        channel_name: Some("general".to_owned()),
        topic: "greetings".to_owned(),
        sender_email: "a@example.com".to_owned(),
        public_channel: true,
        local_echo: None,
    };
    let recipients: Vec<MessageRecipient> = (0..1_000)
        .map(|u| MessageRecipient {
            user_id: UserId(u),
            flags: vec!["mentioned".to_owned()],
        })
        .collect();
    let event = Event::message(recipients, payload);
    let start = Instant::now();
    engine.deliver(&event);
    println!(
        "a message to 1,000 recipients (2,000 queues) delivered in {:?}",
        start.elapsed()
    );
}
