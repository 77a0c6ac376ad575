//! Channel and topic links: `#**channel**`, `#**channel>topic**` and
//! `#**channel>topic@message_id**`, with Zulip's `/#narrow/…` URL encoding.

use crate::{escape, sanitize, stash::Stash, Lookup};

/// Zulip's `encode_hash_component`: percent-encoding with `.` in place of `%`.
pub(crate) fn encode_hash_component(s: &str) -> String {
    let quoted = escape::quote(s, b"*");
    let mut out = String::with_capacity(quoted.len() + 4);
    for c in quoted.chars() {
        match c {
            '%' => out.push('.'),
            '(' => out.push_str(".28"),
            ')' => out.push_str(".29"),
            '.' => out.push_str(".2E"),
            _ => out.push(c),
        }
    }
    out
}

/// The `/#narrow/channel/…` operand for a channel: `ID-name` with spaces as dashes.
pub(crate) fn channel_operand(id: i64, name: &str) -> String {
    format!("{id}-{}", encode_hash_component(&name.replace(' ', "-")))
}

/// Whether the character before `#` lets a channel link start (`(?<![^\s'"\(,:<])`).
pub(crate) fn can_start_after(prev: Option<char>) -> bool {
    prev.is_none_or(|c| c.is_whitespace() || "'\"(,:<".contains(c))
}

/// Tries a channel link at byte `start` of `s` (which holds `#`).
pub(crate) fn try_channel_link(
    s: &str,
    start: usize,
    lookup: &dyn Lookup,
    stash: &mut Stash,
) -> Option<(usize, String)> {
    let inner = s[start..].strip_prefix("#**")?;
    let len = inner.find(['*', '\n'])?;
    if len == 0 || !inner[len..].starts_with("**") {
        return None;
    }
    let body = &inner[..len];
    let end = start + 3 + len + 2;
    let html = match body.split_once('>') {
        None => {
            let channel = lookup.channel_by_name(body)?;
            let href = format!(
                "/#narrow/channel/{}",
                channel_operand(channel.id, &channel.name)
            );
            format!(
                "<a class=\"stream\" data-stream-id=\"{}\" href=\"{}\"{}>#{}</a>",
                channel.id,
                escape::attr(&href),
                sanitize::link_attributes(&href),
                escape::text(body)
            )
        }
        Some((name, topic_part)) => {
            let channel = lookup.channel_by_name(name)?;
            let operand = channel_operand(channel.id, &channel.name);
            let message = topic_part.rsplit_once('@').and_then(|(topic, id)| {
                (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then_some((topic, id))
            });
            match message {
                Some((topic, id)) => format!(
                    "<a class=\"message-link\" href=\"/#narrow/channel/{}/topic/{}/near/{id}\"{}>#{} &gt; {} @ 💬</a>",
                    escape::attr(&operand),
                    escape::attr(&encode_hash_component(topic)),
                    sanitize::link_attributes("/#narrow"),
                    escape::text(name),
                    escape::text(topic)
                ),
                None => format!(
                    "<a class=\"stream-topic\" data-stream-id=\"{}\" href=\"/#narrow/channel/{}/topic/{}\"{}>#{} &gt; {}</a>",
                    channel.id,
                    escape::attr(&operand),
                    escape::attr(&encode_hash_component(topic_part)),
                    sanitize::link_attributes("/#narrow"),
                    escape::text(name),
                    escape::text(topic_part)
                ),
            }
        }
    };
    let token = stash.push(&s[start..end], html);
    Some((end, token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Linkifier, MentionChannel, MentionGroup, MentionUser, RealmEmoji};

    struct Channels;
    impl Lookup for Channels {
        fn users_by_name(&self, _: &str) -> Vec<MentionUser> {
            vec![]
        }
        fn user_by_id(&self, _: i64) -> Option<MentionUser> {
            None
        }
        fn group_by_name(&self, _: &str) -> Option<MentionGroup> {
            None
        }
        fn channel_by_name(&self, n: &str) -> Option<MentionChannel> {
            (n == "Verona lab").then(|| MentionChannel {
                id: 3,
                name: n.into(),
            })
        }
        fn realm_emoji(&self, _: &str) -> Option<RealmEmoji> {
            None
        }
        fn linkifiers(&self) -> &[Linkifier] {
            &[]
        }
    }

    fn html(src: &str) -> Option<String> {
        let mut stash = Stash::default();
        try_channel_link(src, 0, &Channels, &mut stash)?;
        stash.get(0).map(|e| e.html.clone())
    }

    #[test]
    fn encodes_like_zulip() {
        assert_eq!(encode_hash_component("a b.c(d)%"), "a.20b.2Ec.28d.29.25");
        assert_eq!(channel_operand(3, "Verona lab"), "3-Verona-lab");
    }

    #[test]
    fn links() {
        assert_eq!(
            html("#**Verona lab**").unwrap(),
            "<a class=\"stream\" data-stream-id=\"3\" href=\"/#narrow/channel/3-Verona-lab\" rel=\"noopener noreferrer\">#Verona lab</a>"
        );
        assert_eq!(
            html("#**Verona lab>my topic**").unwrap(),
            "<a class=\"stream-topic\" data-stream-id=\"3\" href=\"/#narrow/channel/3-Verona-lab/topic/my.20topic\" rel=\"noopener noreferrer\">#Verona lab &gt; my topic</a>"
        );
        assert!(html("#**Verona lab>t@12**").unwrap().contains("/near/12"));
        assert!(html("#**Nowhere**").is_none());
    }
}
