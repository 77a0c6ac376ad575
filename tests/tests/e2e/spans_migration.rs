//! The migration to subscription spans, read ranges and sparse rows (issue 15, migration
//! 000080): a database in the old schema is seeded with a random but reproducible history
//! (subscribing and unsubscribing, deactivation, channel and direct messages with every flag,
//! historical rows, moves between channels), migrated, and every user's flags on every message
//! read from the new representation must equal the rows before.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use parley_domain::message::flags;
use parley_domain::{MessageId, UserId};
use parley_storage::schema::{messages, read_ranges, subscription_spans, user_messages};
use parley_storage::testing::{empty_database, Backend};
use std::collections::{BTreeMap, BTreeSet};

const USERS: i64 = 10;
const CHANNELS: i64 = 4;
const FIRST_USER: i64 = 1000;
const FIRST_CHANNEL: i64 = 1000;
const FIRST_MESSAGE: i64 = 1000;

/// A small linear congruential generator: the same history on every run and backend.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: i64) -> i64 {
        (self.next() % n as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The seeded history as SQL, and how many rows it made.
fn seed(rng: &mut Rng) -> (String, usize) {
    let mut sql = String::new();
    let users: Vec<i64> = (FIRST_USER..FIRST_USER + USERS).collect();
    let channels: Vec<i64> = (FIRST_CHANNEL..FIRST_CHANNEL + CHANNELS).collect();
    for u in &users {
        sql.push_str(&format!(
            "INSERT INTO users (id, delivery_email, full_name, api_key, role, date_joined) \
             VALUES ({u}, 'u{u}@example.com', 'User {u}', 'key{u}', 400, 0);\n"
        ));
    }
    for c in &channels {
        let g = "'{}'";
        sql.push_str(&format!(
            "INSERT INTO channels (id, name, name_key, date_created, can_add_subscribers_group, \
             can_administer_channel_group, can_delete_any_message_group, \
             can_delete_own_message_group, can_move_messages_out_of_channel_group, \
             can_move_messages_within_channel_group, can_remove_subscribers_group, \
             can_send_message_group, can_subscribe_group, can_resolve_topics_group) \
             VALUES ({c}, 'c{c}', 'c{c}', 0, {g}, {g}, {g}, {g}, {g}, {g}, {g}, {g}, {g}, {g});\n"
        ));
    }
    let mut subscribed: BTreeMap<(i64, i64), bool> = BTreeMap::new();
    let mut inactive: BTreeSet<i64> = BTreeSet::new();
    let mut rows: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    let mut channel_messages: Vec<i64> = Vec::new();
    let mut next_id = FIRST_MESSAGE;
    for _ in 0..600 {
        let roll = rng.below(100);
        let u = users[rng.below(USERS) as usize];
        let c = channels[rng.below(CHANNELS) as usize];
        if roll < 15 {
            let now = !subscribed.get(&(u, c)).copied().unwrap_or(false);
            subscribed.insert((u, c), now);
        } else if roll < 18 && u != FIRST_USER {
            if !inactive.remove(&u) {
                inactive.insert(u);
            }
        } else if roll < 70 && !inactive.contains(&u) {
            let id = next_id;
            next_id += 1;
            let wildcard = rng.chance(8);
            sql.push_str(&format!(
                "INSERT INTO messages (id, sender_id, channel_id, topic, topic_key, content, \
                 rendered_content, date_sent) VALUES ({id}, {u}, {c}, 't{t}', 't{t}', 'hello', \
                 '<p>hello</p>', {id});\n",
                t = rng.below(3)
            ));
            channel_messages.push(id);
            let recipients: Vec<i64> = users
                .iter()
                .copied()
                .filter(|r| subscribed.get(&(*r, c)).copied().unwrap_or(false))
                .filter(|r| !inactive.contains(r))
                .collect();
            for r in &recipients {
                let mut bits = 0;
                // Reading comes in runs: most of a user's messages are read, some not.
                if (*r == u && rng.chance(90)) || rng.chance(65) {
                    bits |= flags::READ;
                }
                if rng.chance(5) {
                    bits |= flags::STARRED;
                }
                if rng.chance(3) {
                    bits |= flags::COLLAPSED;
                }
                if rng.chance(10) {
                    bits |= flags::MENTIONED;
                }
                if rng.chance(3) {
                    bits |= flags::GROUP_MENTIONED;
                }
                if rng.chance(3) {
                    bits |= flags::TOPIC_WILDCARD_MENTIONED;
                }
                if rng.chance(3) {
                    bits |= flags::HAS_ALERT_WORD;
                }
                if wildcard {
                    bits |= flags::STREAM_WILDCARD_MENTIONED;
                }
                rows.insert((*r, id), bits);
            }
            if !recipients.contains(&u) {
                // The sender's own copy: no `@all` bit, as the send path writes it.
                rows.insert((u, id), if rng.chance(80) { flags::READ } else { 0 });
            }
        } else if roll < 82 && !inactive.contains(&u) {
            let id = next_id;
            next_id += 1;
            let other = users[rng.below(USERS) as usize];
            let key = format!("{},{}", u.min(other), u.max(other));
            sql.push_str(&format!(
                "INSERT INTO messages (id, sender_id, dm_key, recipient_user_id, content, \
                 rendered_content, date_sent) VALUES ({id}, {u}, '{key}', {other}, 'hi', \
                 '<p>hi</p>', {id});\n"
            ));
            for p in [u, other] {
                let mut bits = flags::IS_PRIVATE;
                if p == u || rng.chance(60) {
                    bits |= flags::READ;
                }
                if rng.chance(5) {
                    bits |= flags::STARRED;
                }
                rows.insert((p, id), bits);
            }
        } else if roll < 92 && !channel_messages.is_empty() {
            let m = channel_messages[rng.below(channel_messages.len() as i64) as usize];
            if let std::collections::btree_map::Entry::Vacant(e) = rows.entry((u, m)) {
                let mut bits = flags::READ | flags::HISTORICAL;
                if rng.chance(50) {
                    bits |= flags::STARRED;
                }
                if rng.chance(20) {
                    bits &= !flags::READ;
                }
                e.insert(bits);
            }
        } else if !channel_messages.is_empty() {
            // A move to another channel keeps everyone's rows.
            let m = channel_messages[rng.below(channel_messages.len() as i64) as usize];
            sql.push_str(&format!(
                "UPDATE messages SET channel_id = {c} WHERE id = {m};\n"
            ));
        }
    }
    for ((u, c), active) in &subscribed {
        sql.push_str(&format!(
            "INSERT INTO subscriptions (user_id, channel_id, active, color) \
             VALUES ({u}, {c}, {}, '#c0c0c0');\n",
            if *active { "TRUE" } else { "FALSE" }
        ));
    }
    for u in &inactive {
        sql.push_str(&format!(
            "UPDATE users SET is_active = FALSE WHERE id = {u};\n"
        ));
    }
    for ((u, m), bits) in &rows {
        sql.push_str(&format!(
            "INSERT INTO user_messages (user_id, message_id, flags) VALUES ({u}, {m}, {bits});\n"
        ));
    }
    (sql, rows.len())
}

#[test]
fn migrating_keeps_every_users_flags_on_every_message() {
    for backend in Backend::available() {
        for seed_value in [1_u64, 7, 42] {
            let db = empty_database(&backend);
            let mut conn = parley_storage::conn::establish(&db.url).unwrap();
            parley_storage::migrate::run_pending_before(&mut conn, "20261126000080").unwrap();
            let (sql, row_count) = seed(&mut Rng(seed_value));
            conn.batch_execute(&sql).unwrap();
            let before: BTreeMap<(i64, i64), i64> = user_messages::table
                .select((
                    user_messages::user_id,
                    user_messages::message_id,
                    user_messages::flags,
                ))
                .load::<(i64, i64, i64)>(&mut conn)
                .unwrap()
                .into_iter()
                .map(|(u, m, f)| ((u, m), f))
                .collect();
            assert_eq!(before.len(), row_count);
            parley_storage::migrate::run_pending(&mut conn).unwrap();

            let ids: Vec<MessageId> = messages::table
                .select(messages::id)
                .order(messages::id)
                .load::<i64>(&mut conn)
                .unwrap()
                .into_iter()
                .map(MessageId)
                .collect();
            let mut compared = 0;
            for u in FIRST_USER..FIRST_USER + USERS {
                let after =
                    parley_storage::reader_flags::flags_for(&mut conn, UserId(u), &ids).unwrap();
                assert_eq!(after.len(), ids.len());
                for (m, flags) in after {
                    assert_eq!(
                        flags,
                        before.get(&(u, m.0)).copied(),
                        "{}, seed {seed_value}: user {u}, message {}",
                        backend.name(),
                        m.0
                    );
                    compared += 1;
                }
            }
            // Covered rows store `read` set (migration 000104): none is left in the index of
            // unread rows, and some covered rows exist for the check to mean something.
            let mut covered_rows = |read_clear: bool| {
                #[derive(QueryableByName)]
                struct Count {
                    #[diesel(sql_type = diesel::sql_types::BigInt)]
                    n: i64,
                }
                let sql = format!(
                    "SELECT COUNT(*) AS n FROM user_messages um JOIN messages m \
                     ON m.id = um.message_id WHERE m.channel_id IS NOT NULL AND {} \
                     AND (um.flags & 1) {} 0",
                    parley_storage::reader_flags::covered_sql(
                        "um.user_id",
                        parley_storage::reader_flags::SpanEnd::Probe,
                    ),
                    if read_clear { "=" } else { "<>" },
                );
                let n = match &mut conn {
                    parley_storage::DbConn::Sqlite(c) => {
                        diesel::sql_query(&sql).get_result::<Count>(c)
                    }
                    parley_storage::DbConn::Pg(c) => diesel::sql_query(&sql).get_result::<Count>(c),
                };
                n.unwrap().n
            };
            assert_eq!(covered_rows(true), 0);
            assert!(covered_rows(false) > 0);
            let spans: i64 = subscription_spans::table
                .count()
                .get_result(&mut conn)
                .unwrap();
            let ranges: i64 = read_ranges::table.count().get_result(&mut conn).unwrap();
            assert!(compared > 1000 && spans > 0 && ranges > 0);
            // Fewer ranges than the read rows they stand for (runs of reading).
            let read_rows = before.values().filter(|b| *b & flags::READ != 0).count();
            assert!(
                (ranges as usize) < read_rows,
                "{ranges} ranges, {read_rows} read rows"
            );
        }
    }
}
