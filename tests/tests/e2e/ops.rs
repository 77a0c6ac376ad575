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
