//! The message part of a snapshot: the newest message ID, unread messages, starred messages and
//! recent direct-message conversations.

use super::input::{put, Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use parley_domain::message::{dm_participants, flags};
use parley_storage::{messages, summaries, DbConn};
use parley_wire::personal::{
    RecentConversation, UnreadDirect, UnreadGroup, UnreadMessages, UnreadTopic,
};
use std::collections::BTreeMap;

/// At most this many unread messages are listed (the reference's limit); `old_unreads_missing`
/// says when there were more.
const MAX_UNREAD_MESSAGES: i64 = 50_000;

/// Recent direct-message conversations come from this many newest direct messages.
const RECENT_DM_SCAN: u16 = 1000;

/// Fills `max_message_id`, `unread_msgs`, `starred_messages` and `recent_private_conversations`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    let me = input.user.id;
    if wanted.wants("message") {
        let max = messages::max_id_for(conn, me)?.unwrap_or(-1);
        out.insert("max_message_id".into(), max.into());
    }
    if wanted.wants("message") && wanted.wants("update_message_flags") {
        put(out, "unread_msgs", unread_msgs(input, conn)?);
    }
    if wanted.wants("starred_messages") {
        let ids: Vec<i64> = summaries::starred(conn, me)?.iter().map(|m| m.0).collect();
        out.insert("starred_messages".into(), ids.into());
    }
    if wanted.wants("recent_private_conversations") {
        let list: Vec<RecentConversation> =
            summaries::recent_conversations(conn, me, RECENT_DM_SCAN)?
                .into_iter()
                .map(|row| RecentConversation {
                    max_message_id: row.max_id,
                    user_ids: dm_participants(&row.dm_key)
                        .into_iter()
                        .filter(|u| *u != me)
                        .collect(),
                })
                .collect();
        put(out, "recent_private_conversations", list);
    }
    Ok(())
}

/// `unread_msgs`: unread message IDs grouped by conversation, and the unread mentions.
fn unread_msgs(input: &SnapshotInput<'_>, conn: &mut DbConn) -> ActionResult<UnreadMessages> {
    let me = input.user.id;
    let rows = summaries::unread(conn, me, MAX_UNREAD_MESSAGES + 1)?;
    let missing = rows.len() as i64 > MAX_UNREAD_MESSAGES;
    let rows = &rows[usize::from(missing)..];
    let mut streams: BTreeMap<(i64, String), (String, Vec<i64>)> = BTreeMap::new();
    let mut pms: BTreeMap<i64, (i64, Vec<i64>)> = BTreeMap::new();
    let mut huddles: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut mentions = Vec::new();
    let mention_bits = flags::MENTIONED
        | flags::STREAM_WILDCARD_MENTIONED
        | flags::TOPIC_WILDCARD_MENTIONED
        | flags::GROUP_MENTIONED;
    for row in rows {
        if row.flags & mention_bits != 0 {
            mentions.push(row.id);
        }
        match (row.channel_id, &row.dm_key) {
            (Some(channel), _) => {
                streams
                    .entry((channel, row.topic.to_lowercase()))
                    .or_insert_with(|| (row.topic.clone(), Vec::new()))
                    .1
                    .push(row.id);
            }
            (None, Some(key)) => {
                let people = dm_participants(key);
                if people.len() <= 2 {
                    let other = people.iter().copied().find(|u| *u != me).unwrap_or(me);
                    pms.entry(other.0)
                        .or_insert_with(|| (row.sender_id, Vec::new()))
                        .1
                        .push(row.id);
                } else {
                    let ids: Vec<String> = people.iter().map(|u| u.0.to_string()).collect();
                    huddles.entry(ids.join(",")).or_default().push(row.id);
                }
            }
            (None, None) => {}
        }
    }
    Ok(UnreadMessages {
        count: rows.len(),
        pms: pms
            .into_iter()
            .map(|(other, (sender, ids))| UnreadDirect {
                other_user_id: other,
                sender_id: sender,
                unread_message_ids: ids,
            })
            .collect(),
        streams: streams
            .into_iter()
            .map(|((channel, _), (topic, ids))| UnreadTopic {
                stream_id: channel,
                topic: input.topic(&topic),
                unread_message_ids: ids,
            })
            .collect(),
        huddles: huddles
            .into_iter()
            .map(|(key, ids)| UnreadGroup {
                user_ids_string: key,
                unread_message_ids: ids,
            })
            .collect(),
        mentions,
        old_unreads_missing: missing,
    })
}
