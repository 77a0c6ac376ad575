//! Subscription spans (issue 15): a user received every message of a channel with an ID in
//! `[first_message_id, end_message_id)`; `end_message_id` is NULL while the user is an active
//! subscriber and an active user, the two inputs of the send's recipient rule
//! ([`crate::subscriptions::active_recipients`]). A send therefore writes nothing per
//! recipient; spans change only where those inputs change, through [`sync`].

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{messages, subscription_spans as spans, subscriptions as subs, users};
use diesel::prelude::*;
use parley_domain::{ChannelId, UserId};
use std::collections::HashSet;

use advisory::{pg_advisory_xact_lock, pg_advisory_xact_lock_shared};

/// The PostgreSQL advisory lock that orders sends and span changes (an arbitrary constant).
pub(crate) const SPANS_LOCK: i64 = 0x0073_7061_6e73;

/// The first of the advisory locks of one channel's sends (`CHANNEL_LOCKS + channel ID`; the
/// other keys of the database are small constants).
pub(crate) const CHANNEL_LOCKS: i64 = 0x7061_726c_0000_0000;

/// The first of the advisory locks of moves into one channel (`MOVE_LOCKS + channel ID`),
/// which mark-as-read holds shared ([`settle`]) and a move exclusively
/// ([`hold_channels_for_move`]).
const MOVE_LOCKS: i64 = 0x7061_726d_0000_0000;

/// Holds off span changes and moves of the channel's messages until this transaction ends; a
/// send takes both locks before reading its recipients and before its message takes an ID
/// ([`recipients_for_send`]). On PostgreSQL transactions run side by side under `READ
/// COMMITTED`.
///
/// Without the first lock a send could read the subscribers before a subscription commits and
/// take a message ID above the span that subscription opened at [`next_message_id`], so the
/// new subscriber would hold the message without having been told of it (or the reverse for an
/// unsubscription); shared: sends do not wait for each other for it.
///
/// The second is the channel's own, which sends take shared and run side by side: a move
/// takes it exclusively ([`hold_channels_for_move`]) to hold them off, and mark-as-read waits
/// for its holders ([`settle`]). A read copy of a new message (the sender's own with
/// `read_by_sender`, a muter's) joins the read range ending at the channel's previous message
/// (`read_ranges::add_newest`), where a message with a lower ID committing later would fall
/// inside that range, read for a user who never saw it; but IDs are taken in commit order (the
/// ID's lock, migration 000110), so every lower ID has committed when the range is joined, and
/// the sends with read copies need the channel's lock no more than the others. Both in one
/// statement. On SQLite writes take turns, so nothing is
/// needed. A message's send takes them in the statement that finds its channel instead
/// (`channels::for_send`).
fn hold_for_send(
    conn: &mut DbConn,
    channel: ChannelId,
    lock: SendLock,
) -> Result<SendHold, StorageError> {
    if let DbConn::Pg(pg) = conn {
        let key = CHANNEL_LOCKS + channel.0;
        match lock {
            SendLock::Exclusive => diesel::select((
                pg_advisory_xact_lock_shared(SPANS_LOCK),
                pg_advisory_xact_lock(key),
            ))
            .execute(pg)?,
            SendLock::Shared => diesel::select((
                pg_advisory_xact_lock_shared(SPANS_LOCK),
                pg_advisory_xact_lock_shared(key),
            ))
            .execute(pg)?,
        };
    }
    Ok(SendHold { channel })
}

/// How a transaction holds a channel's send lock (`hold_for_send`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SendLock {
    /// Beside the channel's other sends: a send.
    Shared,
    /// Alone: a move, which holds the channel's sends off.
    Exclusive,
}

/// Says that this transaction holds a channel's send locks (`hold_for_send`): the reads that
/// must follow them take it, so that none runs before them.
#[derive(Debug)]
pub struct SendHold {
    channel: ChannelId,
}

impl SendHold {
    /// For the channel's read that took the locks (`channels::for_send`).
    pub(crate) fn taken(channel: ChannelId) -> SendHold {
        SendHold { channel }
    }

    /// The channel held.
    pub fn channel(&self) -> ChannelId {
        self.channel
    }
}

/// Waits until the channel's sends and moves in progress have committed, then holds moves into
/// the channel off until this transaction ends. For a mark-as-read, which joins two read
/// ranges when no message of the channel lies between them: a message not yet committed there
/// is not seen, and a range joined across it would make it read for someone who never saw it.
///
/// A send holds the channel's send lock from before it takes its ID to its commit
/// ([`hold_for_send`], shared), so taking that lock exclusively waits for each send in
/// progress; it is let go in the same statement (a session lock), so readers hold neither
/// sends nor each other off. A send that starts later takes a higher ID, above what the
/// transaction knows. A moved message keeps its old ID, so a move holds the send lock too, and
/// the channel's move lock exclusively ([`hold_channels_for_move`]); this transaction holds the
/// move lock shared to its end, so a move that starts later waits for it and then sees (and
/// splits) the ranges it joined. Call it before reading or writing the channel's read ranges in
/// the transaction: a send in progress may extend one (its sender's read copy), and one waited
/// for may itself be waiting to write its sender's range. On SQLite writes take turns, so
/// nothing is in progress.
pub fn settle(conn: &mut DbConn, channel: ChannelId) -> Result<(), StorageError> {
    if let DbConn::Pg(pg) = conn {
        // Innermost first (each subquery kept apart by `OFFSET 0`): wait for the send lock,
        // take the move lock shared, let the send lock go.
        diesel::sql_query(
            "SELECT pg_advisory_unlock($1) AS released FROM \
             (SELECT pg_advisory_xact_lock_shared($2) AS held FROM \
              (SELECT pg_advisory_lock($1) AS waited OFFSET 0) AS w OFFSET 0) AS h",
        )
        .bind::<diesel::sql_types::BigInt, _>(CHANNEL_LOCKS + channel.0)
        .bind::<diesel::sql_types::BigInt, _>(MOVE_LOCKS + channel.0)
        .execute(pg)?;
    }
    Ok(())
}

/// Takes the move locks of the channels, then their send locks, each in ID order and
/// exclusively, for a transaction that moves messages between them, before it writes anything:
/// the messages arrive among the new channel's with their old IDs, so nobody may join read
/// ranges across them before the move commits, and a mark-as-read in progress there must
/// commit first, so that the move sees the ranges it joined ([`settle`]). All move locks
/// before all send locks, so that two moves cannot wait for each other; the send locks also
/// cover the notices a move posts in either channel (each post takes its channel's lock again,
/// already held: taken one by one there, two moves going opposite ways could each hold the
/// lock the other waits for).
pub fn hold_channels_for_move(
    conn: &mut DbConn,
    channels: &[ChannelId],
) -> Result<(), StorageError> {
    let mut ordered = channels.to_vec();
    ordered.sort_unstable_by_key(|c| c.0);
    ordered.dedup();
    if let DbConn::Pg(pg) = conn {
        for channel in &ordered {
            diesel::select(pg_advisory_xact_lock(MOVE_LOCKS + channel.0)).execute(pg)?;
        }
    }
    for channel in ordered {
        hold_for_send(conn, channel, SendLock::Exclusive)?;
    }
    Ok(())
}

/// PostgreSQL's advisory locks, through diesel's query builder, so that the statements stay
/// prepared (unlike `sql_query`'s). They return `void`, declared `Bool` here: never decoded.
pub(crate) mod advisory {
    diesel::define_sql_function! {
        /// PostgreSQL's shared transaction-scoped advisory lock.
        fn pg_advisory_xact_lock_shared(key: diesel::sql_types::BigInt) -> diesel::sql_types::Bool;
    }
    diesel::define_sql_function! {
        /// PostgreSQL's exclusive transaction-scoped advisory lock.
        fn pg_advisory_xact_lock(key: diesel::sql_types::BigInt) -> diesel::sql_types::Bool;
    }
}

/// The recipients of a message sent to the channel now: the users with an open span, read after
/// [`hold_for_send`], so that no span change commits between this read and the send's commit.
/// Sorted by ID.
pub fn recipients_for_send(
    conn: &mut DbConn,
    channel: ChannelId,
) -> Result<Vec<UserId>, StorageError> {
    let hold = hold_for_send(conn, channel, SendLock::Shared)?;
    recipients_held(conn, &hold)
}

/// The recipients of a message sent to the held channel now, sorted by ID.
pub fn recipients_held(conn: &mut DbConn, hold: &SendHold) -> Result<Vec<UserId>, StorageError> {
    let mut users: Vec<UserId> = open_users(conn, hold.channel)?.into_iter().collect();
    users.sort_unstable();
    Ok(users)
}

/// Waits for the sends in progress and holds new ones off until this transaction ends: taken
/// by every span change before it reads [`next_message_id`] (see [`hold_for_send`]). One lock for
/// all channels, so that two changes of several channels cannot wait for each other.
fn hold_for_change(conn: &mut DbConn) -> Result<(), StorageError> {
    if let DbConn::Pg(pg) = conn {
        diesel::select(pg_advisory_xact_lock(SPANS_LOCK)).execute(pg)?;
    }
    Ok(())
}

/// The ID the next message will have at the least: a span opened here covers every later
/// message and none that exists; one closed here covers every message that exists.
pub fn next_message_id(conn: &mut DbConn) -> Result<i64, StorageError> {
    let max: Option<i64> = messages::table
        .select(diesel::dsl::max(messages::id))
        .get_result(conn)?;
    Ok(max.unwrap_or(0) + 1)
}

/// Whether the send rule counts the user as a recipient of the channel now.
fn wanted(conn: &mut DbConn, user: UserId, channel: ChannelId) -> Result<bool, StorageError> {
    Ok(subs::table
        .inner_join(users::table)
        .filter(subs::user_id.eq(user.0))
        .filter(subs::channel_id.eq(channel.0))
        .filter(subs::active.eq(true))
        .filter(users::is_active.eq(true))
        .count()
        .get_result::<i64>(conn)?
        > 0)
}

/// Opens or closes the user's span of the channel so that it is open exactly when the user is
/// an active subscriber and an active user. Reopening right where the last span ended (no
/// message in between) extends that span instead of starting another.
pub fn sync(conn: &mut DbConn, user: UserId, channel: ChannelId) -> Result<(), StorageError> {
    let want = wanted(conn, user, channel)?;
    let open: Option<i64> = spans::table
        .filter(spans::user_id.eq(user.0))
        .filter(spans::channel_id.eq(channel.0))
        .filter(spans::end_message_id.is_null())
        .select(spans::first_message_id)
        .first(conn)
        .optional()?;
    if want == open.is_some() {
        return Ok(());
    }
    hold_for_change(conn)?;
    let next = next_message_id(conn)?;
    match (want, open) {
        (true, None) => {
            let adjacent: Option<i64> = spans::table
                .filter(spans::user_id.eq(user.0))
                .filter(spans::channel_id.eq(channel.0))
                .filter(spans::end_message_id.ge(next))
                .select(spans::first_message_id)
                .first(conn)
                .optional()?;
            if let Some(first) = adjacent {
                diesel::update(spans::table.find((user.0, channel.0, first)))
                    .set(spans::end_message_id.eq(None::<i64>))
                    .execute(conn)?;
            } else {
                diesel::insert_into(spans::table)
                    .values((
                        spans::user_id.eq(user.0),
                        spans::channel_id.eq(channel.0),
                        spans::first_message_id.eq(next),
                        spans::end_message_id.eq(None::<i64>),
                    ))
                    .execute(conn)?;
            }
        }
        (false, Some(first)) => {
            let target = spans::table.find((user.0, channel.0, first));
            if next <= first {
                diesel::delete(target).execute(conn)?;
            } else {
                diesel::update(target)
                    .set(spans::end_message_id.eq(Some(next)))
                    .execute(conn)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// [`sync`] for these users in one channel.
pub fn sync_users(
    conn: &mut DbConn,
    channel: ChannelId,
    users: &[UserId],
) -> Result<(), StorageError> {
    for user in users {
        sync(conn, *user, channel)?;
    }
    Ok(())
}

/// [`sync`] for every channel the user is subscribed to or has an open span in (after the
/// user is deactivated or reactivated).
pub fn sync_user(conn: &mut DbConn, user: UserId) -> Result<(), StorageError> {
    let mut channels: Vec<i64> = subs::table
        .filter(subs::user_id.eq(user.0))
        .filter(subs::active.eq(true))
        .select(subs::channel_id)
        .load(conn)?;
    channels.extend(
        spans::table
            .filter(spans::user_id.eq(user.0))
            .filter(spans::end_message_id.is_null())
            .select(spans::channel_id)
            .load::<i64>(conn)?,
    );
    channels.sort_unstable();
    channels.dedup();
    for channel in channels {
        sync(conn, user, ChannelId(channel))?;
    }
    Ok(())
}

/// The users with an open span of the channel: the recipients of a message sent now.
pub fn open_users(conn: &mut DbConn, channel: ChannelId) -> Result<HashSet<UserId>, StorageError> {
    Ok(spans::table
        .filter(spans::channel_id.eq(channel.0))
        .filter(spans::end_message_id.is_null())
        .select(spans::user_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

/// The users whose span of the channel contains this message ID.
pub fn covering(
    conn: &mut DbConn,
    channel: ChannelId,
    message: i64,
) -> Result<Vec<UserId>, StorageError> {
    Ok(spans::table
        .filter(spans::channel_id.eq(channel.0))
        .filter(spans::first_message_id.le(message))
        .filter(
            spans::end_message_id
                .is_null()
                .or(spans::end_message_id.gt(message)),
        )
        .select(spans::user_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

/// Takes one message ID out of the user's span of the channel that contains it (splitting the
/// span), for a message the user must not count as received although the span covers its ID:
/// one moved into the channel from elsewhere, or taken away from the user.
pub fn exclude(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    message: i64,
) -> Result<(), StorageError> {
    let span: Option<(i64, Option<i64>)> = spans::table
        .filter(spans::user_id.eq(user.0))
        .filter(spans::channel_id.eq(channel.0))
        .filter(spans::first_message_id.le(message))
        .order(spans::first_message_id.desc())
        .select((spans::first_message_id, spans::end_message_id))
        .first(conn)
        .optional()?;
    let Some((first, end)) = span else {
        return Ok(());
    };
    if end.is_some_and(|end| end <= message) {
        return Ok(());
    }
    diesel::delete(spans::table.find((user.0, channel.0, first))).execute(conn)?;
    if first < message {
        diesel::insert_into(spans::table)
            .values((
                spans::user_id.eq(user.0),
                spans::channel_id.eq(channel.0),
                spans::first_message_id.eq(first),
                spans::end_message_id.eq(Some(message)),
            ))
            .execute(conn)?;
    }
    if end.is_none_or(|end| end > message + 1) {
        diesel::insert_into(spans::table)
            .values((
                spans::user_id.eq(user.0),
                spans::channel_id.eq(channel.0),
                spans::first_message_id.eq(message + 1),
                spans::end_message_id.eq(end),
            ))
            .execute(conn)?;
    }
    Ok(())
}
