//! What a channel send reads once it holds its channel (`spans::SendHold`): the recipients, and
//! the topic's state for the topic visibility rules. On PostgreSQL both come in one statement,
//! a round trip less per send; they follow the locks, so no span change commits between them
//! and the send's commit, and a send that waited for the channel's others sees their messages.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::messages::TopicForSend;
use crate::spans::SendHold;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text};
use parley_domain::UserId;

/// The recipients of a message sent to the held channel now, sorted by ID, and what the send
/// reads of `topic` for `user` (`messages::topic_for_send`), in one statement. PostgreSQL only:
/// on SQLite a send's recipients come from the organization cache and its topic is read in the
/// writing transaction.
pub fn recipients_with_topic(
    conn: &mut DbConn,
    hold: &SendHold,
    topic: &str,
    user: UserId,
) -> Result<(Vec<UserId>, TopicForSend), StorageError> {
    let pg = conn.postgres_only("a send's recipients with its topic in one statement")?;
    let topic_key = topic.to_lowercase();
    let (mut users, has_messages, sender_policy): (Vec<i64>, bool, Option<i64>) =
        RecipientsWithTopic {
            channel: hold.channel().0,
            topic_key: &topic_key,
            user: user.0,
        }
        .get_result(pg)?;
    users.sort_unstable();
    let topic = TopicForSend {
        has_messages,
        sender_policy,
    };
    Ok((users.into_iter().map(UserId).collect(), topic))
}

/// The statement: `spans::open_users` and `topic_for_send` as three subqueries of one row.
/// Its own query type, so that it stays prepared (`crate::prepared`).
struct RecipientsWithTopic<'a> {
    channel: i64,
    topic_key: &'a str,
    user: i64,
}

crate::prepared::prepared_pg_statement!(
    RecipientsWithTopic<'_>,
    (Array<BigInt>, Bool, Nullable<BigInt>)
);

impl QueryFragment<Pg> for RecipientsWithTopic<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "SELECT ARRAY(SELECT user_id FROM subscription_spans \
             WHERE channel_id = ",
        );
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(
            " AND end_message_id IS NULL), \
             EXISTS (SELECT 1 FROM messages WHERE channel_id = ",
        );
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(" AND topic_key = ");
        out.push_bind_param::<Text, _>(&self.topic_key)?;
        out.push_sql("), (SELECT visibility_policy FROM user_topics WHERE user_id = ");
        out.push_bind_param::<BigInt, _>(&self.user)?;
        out.push_sql(" AND channel_id = ");
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(" AND topic_key = ");
        out.push_bind_param::<Text, _>(&self.topic_key)?;
        out.push_sql(")");
        Ok(())
    }
}
