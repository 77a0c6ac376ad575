//! The page queries are kept prepared on PostgreSQL (`storage::sql`, `prepared`): their text
//! holds no value, the reader's ID and every ID list being placeholders (a channel page's limit
//! is written in its text), so one prepared statement per narrow shape serves every reader on a
//! connection. PostgreSQL only: without `TEST_DATABASE_URL` these tests do nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::prelude::*;
use parley_domain::message::flags;
use parley_domain::ChannelId;
use parley_storage::messages::{self, Audience, Condition, Direction};
use parley_storage::DbConn;
use parley_tests::{Account, Backend, TestApp};
use serde_json::json;

/// The page queries prepared on this connection (they select the reader's flags).
fn prepared_pages(conn: &mut DbConn) -> i64 {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let DbConn::Pg(pg) = conn else {
        panic!("PostgreSQL only");
    };
    diesel::sql_query(
        "SELECT COUNT(*) AS n FROM pg_prepared_statements WHERE statement LIKE '%AS reader_flags%'",
    )
    .get_result::<Count>(pg)
    .unwrap()
    .n
}

/// The newest 10 messages of a starred, a channel and an unread narrow, as `reader` reads them.
fn read_pages(conn: &mut DbConn, reader: &Account, channel: i64) -> Vec<Vec<i64>> {
    let audience = Audience::new(reader.user_id, Vec::new());
    let narrows = [
        vec![Condition::Flag(flags::STARRED)],
        vec![Condition::Channel(ChannelId(channel))],
        vec![Condition::Not(Box::new(Condition::Flag(flags::READ)))],
    ];
    narrows
        .iter()
        .map(|narrow| {
            messages::page(
                conn,
                &audience,
                narrow,
                i64::MAX,
                Direction::Before,
                true,
                10,
            )
            .unwrap()
            .iter()
            .map(|m| m.row.id)
            .collect()
        })
        .collect()
}

#[actix_web::test]
async fn page_queries_stay_prepared_whoever_reads() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    let (ann, bob, dev) = app.ann_and_bob_in("dev").await;
    let mut sent = Vec::new();
    for i in 0..12 {
        let who = if i % 2 == 0 { &ann } else { &bob };
        sent.push(app.send_to_channel(who, "dev", "t", &format!("m{i}")).await);
    }
    // Each stars different messages; Bob has read the first half.
    for (who, starred) in [(&ann, &sent[0..3]), (&bob, &sent[5..9])] {
        app.post("/messages/flags")
            .as_user(who)
            .json_param("messages", &json!(starred))
            .param("op", "add")
            .param("flag", "starred")
            .send()
            .await
            .success();
    }
    app.post("/messages/flags")
        .as_user(&bob)
        .json_param("messages", &json!(sent[0..6]))
        .param("op", "add")
        .param("flag", "read")
        .send()
        .await
        .success();

    let mut conn = app.ctx.db.conn().unwrap();
    let before = prepared_pages(&mut conn);
    let ann_pages = read_pages(&mut conn, &ann, dev);
    let shapes = prepared_pages(&mut conn) - before;
    let bob_pages = read_pages(&mut conn, &bob, dev);
    assert_eq!(
        prepared_pages(&mut conn) - before,
        shapes,
        "another reader, other IDs: the same statements"
    );
    assert_eq!(
        shapes, 3,
        "one statement each for the starred, the channel and the unread page (the channel \
         page's with its limit in the text, and the reader's row read per message)"
    );

    // And the pages are each reader's own.
    let newest_first = |ids: &[i64]| ids.iter().rev().copied().collect::<Vec<_>>();
    assert_eq!(ann_pages[0], newest_first(&sent[0..3]));
    assert_eq!(bob_pages[0], newest_first(&sent[5..9]));
    assert_eq!(ann_pages[1], newest_first(&sent[2..12]));
    assert_eq!(bob_pages[1], ann_pages[1]);
    // Bob's unread: Ann's messages after the first six (his own may count as read).
    assert!(sent[6..12]
        .iter()
        .step_by(2)
        .all(|m| bob_pages[2].contains(m)));
    assert!(
        bob_pages[2].iter().all(|m| *m >= sent[6]),
        "{:?}",
        bob_pages[2]
    );
}
