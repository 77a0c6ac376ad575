//! Mentions: users (`@**Full Name**`, `@**Full Name|123**`, `@**|123**`), silent mentions
//! (`@_**…**`), user groups (`@*group*`, `@_*group*`) and the wildcards `all`, `everyone`,
//! `channel`, `stream` and `topic`, in Zulip's HTML.

use crate::{
    escape,
    stash::{Effect, Stash},
    Lookup, MentionUser,
};

/// Whether the character before an `@` lets a mention start (Zulip's
/// `(?<![^\s'"\(\{\[\/<])`).
pub(crate) fn can_start_after(prev: Option<char>) -> bool {
    prev.is_none_or(|c| c.is_whitespace() || "'\"({[/<".contains(c))
}

/// Tries a mention at byte `start` of `s` (which holds `@`); on success stores it and returns
/// the end of the match and the token.
pub(crate) fn try_mention(
    s: &str,
    start: usize,
    lookup: &dyn Lookup,
    stash: &mut Stash,
) -> Option<(usize, String)> {
    let rest = &s[start + 1..];
    let (silent, rest, offset) = match rest.strip_prefix('_') {
        Some(r) => (true, r, start + 2),
        None => (false, rest, start + 1),
    };
    if let Some(inner) = rest.strip_prefix("**") {
        let len = inner.find(['*', '\n'])?;
        if len == 0 || !inner[len..].starts_with("**") {
            return None;
        }
        let name = &inner[..len];
        let end = offset + 2 + len + 2;
        let (html, effect) = user_mention(name, silent, lookup)?;
        let token = stash.push_with(&s[start..end], html, effect);
        return Some((end, token));
    }
    if let Some(inner) = rest.strip_prefix('*') {
        let len = inner.find(['*', '\n'])?;
        if len == 0 {
            return None;
        }
        let name = &inner[..len];
        let end = offset + 1 + len + 1;
        let group = lookup.group_by_name(name)?;
        let (class, text, effect) = if silent {
            (
                "user-group-mention silent",
                group.name.clone(),
                Effect::None,
            )
        } else {
            (
                "user-group-mention",
                format!("@{}", group.name),
                Effect::Group(group.id),
            )
        };
        let html = format!(
            "<span class=\"{class}\" data-user-group-id=\"{}\">{}</span>",
            group.id,
            escape::text(&text)
        );
        let token = stash.push_with(&s[start..end], html, effect);
        return Some((end, token));
    }
    None
}

/// The wildcard kind of a mention name, if it is one.
fn wildcard(name: &str) -> Option<bool> {
    match name {
        "all" | "everyone" | "stream" | "channel" => Some(false),
        "topic" => Some(true),
        _ => None,
    }
}

/// Renders `@**name**`; `None` when no user matches (the text then stays as written).
fn user_mention(name: &str, silent: bool, lookup: &dyn Lookup) -> Option<(String, Effect)> {
    if let Some(is_topic) = wildcard(name) {
        let (class, attr) = if is_topic {
            ("topic-mention", String::new())
        } else {
            ("user-mention", " data-user-id=\"*\"".to_owned())
        };
        let effect = match (silent, is_topic) {
            (true, _) => Effect::None,
            (false, true) => Effect::TopicWildcard,
            (false, false) => Effect::StreamWildcard,
        };
        let (class, text) = if silent {
            (format!("{class} silent"), name.to_owned())
        } else {
            (class.to_owned(), format!("@{name}"))
        };
        return Some((
            format!(
                "<span class=\"{class}\"{attr}>{}</span>",
                escape::text(&text)
            ),
            effect,
        ));
    }
    let user = find_user(name, lookup)?;
    let (class, text, effect) = if silent {
        ("user-mention silent", user.full_name.clone(), Effect::None)
    } else {
        (
            "user-mention",
            format!("@{}", user.full_name),
            Effect::User(user.id),
        )
    };
    Some((
        format!(
            "<span class=\"{class}\" data-user-id=\"{}\">{}</span>",
            user.id,
            escape::text(&text)
        ),
        effect,
    ))
}

/// Resolves `Full Name`, `Full Name|id` or `|id`. A name shared by several users matches
/// none of them: the sender must use the `|id` form.
fn find_user(name: &str, lookup: &dyn Lookup) -> Option<MentionUser> {
    if let Some((full_name, id)) = name.rsplit_once('|') {
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            let user = lookup.user_by_id(id.parse().ok()?)?;
            if !full_name.is_empty() && user.full_name != full_name {
                return None;
            }
            return Some(user);
        }
    }
    let mut users = lookup.users_by_name(name);
    (users.len() == 1).then(|| users.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Linkifier, MentionChannel, MentionGroup, RealmEmoji};

    struct People;
    impl Lookup for People {
        fn users_by_name(&self, n: &str) -> Vec<MentionUser> {
            match n {
                "King Hamlet" => vec![MentionUser {
                    id: 10,
                    full_name: n.into(),
                }],
                "Twin" => vec![
                    MentionUser {
                        id: 1,
                        full_name: n.into(),
                    },
                    MentionUser {
                        id: 2,
                        full_name: n.into(),
                    },
                ],
                _ => vec![],
            }
        }
        fn user_by_id(&self, id: i64) -> Option<MentionUser> {
            match id {
                10 => Some(MentionUser {
                    id,
                    full_name: "King Hamlet".into(),
                }),
                1 | 2 => Some(MentionUser {
                    id,
                    full_name: "Twin".into(),
                }),
                _ => None,
            }
        }
        fn group_by_name(&self, n: &str) -> Option<MentionGroup> {
            (n == "support").then(|| MentionGroup {
                id: 5,
                name: n.into(),
            })
        }
        fn channel_by_name(&self, _: &str) -> Option<MentionChannel> {
            None
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
        let (end, _) = try_mention(src, 0, &People, &mut stash)?;
        assert_eq!(end, src.len());
        stash.get(0).map(|e| e.html.clone())
    }

    #[test]
    fn users() {
        assert_eq!(
            html("@**King Hamlet**").unwrap(),
            "<span class=\"user-mention\" data-user-id=\"10\">@King Hamlet</span>"
        );
        assert_eq!(
            html("@_**King Hamlet**").unwrap(),
            "<span class=\"user-mention silent\" data-user-id=\"10\">King Hamlet</span>"
        );
        assert!(html("@**Twin**").is_none());
        assert!(html("@**Twin|2**").unwrap().contains("data-user-id=\"2\""));
        assert!(html("@**|10**").unwrap().contains("@King Hamlet"));
        assert!(html("@**Twin|10**").is_none());
        assert!(html("@**Nobody**").is_none());
    }

    #[test]
    fn wildcards_and_groups() {
        assert_eq!(
            html("@**all**").unwrap(),
            "<span class=\"user-mention\" data-user-id=\"*\">@all</span>"
        );
        assert_eq!(
            html("@**topic**").unwrap(),
            "<span class=\"topic-mention\">@topic</span>"
        );
        assert_eq!(
            html("@_*support*").unwrap(),
            "<span class=\"user-group-mention silent\" data-user-group-id=\"5\">support</span>"
        );
    }

    #[test]
    fn start_condition() {
        assert!(can_start_after(None));
        assert!(can_start_after(Some('(')));
        assert!(!can_start_after(Some('a')));
    }
}
