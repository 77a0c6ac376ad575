//! Operations endpoints: `GET /health`, `GET /ready`, and `/metrics` off unless configured.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_tests::backend_test;

backend_test! {
    async fn health_and_ready_answer_json_without_authentication(app) {
        let health = app.get_page("/health").send().await;
        assert_eq!(health.status, 200, "{}", health.text);
        assert_eq!(health.json["result"], "success");
        assert_eq!(health.json["status"], "alive");
        let ready = app.get_page("/ready").send().await;
        assert_eq!(ready.status, 200, "{}", ready.text);
        assert_eq!(ready.json["status"], "ready");
        // Off unless --metrics-bind or --metrics-token says otherwise.
        let metrics = app.get_page("/metrics").send().await;
        assert_eq!(metrics.status, 404);
    }
}

/// PostgreSQL ends every connection of the server's pool (as a restart of PostgreSQL would):
/// the server goes on answering. A connection whose last use failed, or that sat idle for a
/// second, is tested before it is handed out (`storage::pooled`), so at most the requests that
/// took a connection used moments before it was ended fail, and each such connection once.
#[actix_web::test]
async fn connections_postgresql_ended_are_replaced() {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let Some(backend) = parley_storage::testing::Backend::postgres() else {
        return;
    };
    let app = parley_tests::TestApp::start(backend).await;
    let parley_storage::DatabaseUrl::Postgres(url) = app.ctx.db.url().clone() else {
        unreachable!()
    };
    let end_pool = || {
        let mut admin = diesel::PgConnection::establish(&url).unwrap();
        admin
            .batch_execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
            .unwrap();
    };
    let open = |app: &parley_tests::TestApp| app.ctx.db.pool_use().open;
    // How many of `n` requests fail.
    let failures = |n: usize| {
        let app = &app;
        async move {
            let mut failed = 0;
            for _ in 0..n {
                if app.get("/users/me").as_user(&app.owner).send().await.status != 200 {
                    failed += 1;
                }
            }
            failed
        }
    };
    assert_eq!(failures(1).await, 0);
    // Idle for longer than a use vouches for a connection: every request succeeds.
    end_pool();
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    assert_eq!(failures(10).await, 0);
    // Ended right after use: each connection fails at most one request, then is replaced.
    end_pool();
    let failed = failures(30).await;
    assert!(
        failed <= open(&app),
        "{failed} requests failed with {} connections open",
        open(&app)
    );
    assert_eq!(failures(10).await, 0);
}

/// Each PostgreSQL connection plans for data in memory or on SSD (`random_page_cost` 1.1
/// instead of the built-in 4, `storage::conn`), unless the operator chose a value: here in the
/// URL's `options`.
#[actix_web::test]
async fn postgresql_connections_plan_for_ssd_unless_told_otherwise() {
    use diesel::prelude::*;
    let Some(backend) = parley_storage::testing::Backend::postgres() else {
        return;
    };
    let app = parley_tests::TestApp::start(backend).await;
    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = diesel::sql_types::Text)]
        value: String,
    }
    let cost = |url: &parley_storage::DatabaseUrl| {
        let conn = parley_storage::conn::establish(url).unwrap();
        let parley_storage::DbConn::Pg(mut pg) = conn else {
            unreachable!()
        };
        diesel::sql_query("SELECT current_setting('random_page_cost') AS value")
            .get_result::<Setting>(&mut pg)
            .unwrap()
            .value
    };
    let url = app.ctx.db.url().clone();
    assert_eq!(cost(&url), "1.1");
    let parley_storage::DatabaseUrl::Postgres(text) = &url else {
        unreachable!()
    };
    let separator = if text.contains('?') { '&' } else { '?' };
    let chosen = parley_storage::DatabaseUrl::parse(&format!(
        "{text}{separator}options=-c%20random_page_cost%3D2"
    ))
    .unwrap();
    assert_eq!(cost(&chosen), "2");
}
