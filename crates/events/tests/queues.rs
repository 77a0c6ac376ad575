//! Queue life cycle: IDs, acknowledgement, long-polling, heartbeats, errors, collection, the
//! cap.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use parley_domain::UserId;
use parley_events::{Bus, Engine, EngineConfig, EventsError, InProcessBus};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn events_are_numbered_from_zero_and_acknowledged() {
    let engine = engine();
    let (queue, last) = engine.register(opts(1));
    assert_eq!(last, -1);
    for ty in ["a", "b", "c"] {
        engine.deliver(&json_event(&[1], ty));
    }
    let events = poll(&engine, 1, &queue, -1).await;
    assert_eq!(ids(&events), [0, 1, 2]);
    assert_eq!(types(&events), ["a", "b", "c"]);
    assert_eq!(events[0], json!({"type": "a", "id": 0}));

    // Unacknowledged events come again; acknowledged ones are pruned.
    assert_eq!(ids(&poll(&engine, 1, &queue, -1).await), [0, 1, 2]);
    assert_eq!(ids(&poll(&engine, 1, &queue, 1).await), [2]);
    assert!(poll(&engine, 1, &queue, 2).await.is_empty());
    engine.deliver(&json_event(&[1], "d"));
    assert_eq!(ids(&poll(&engine, 1, &queue, 2).await), [3]);
}

#[tokio::test]
async fn only_the_audience_receives() {
    let engine = engine();
    let q1 = register(&engine, 1);
    let q1b = register(&engine, 1);
    let q2 = register(&engine, 2);
    engine.deliver(&json_event(&[1, 1], "x"));
    assert_eq!(poll(&engine, 1, &q1, -1).await.len(), 1);
    assert_eq!(poll(&engine, 1, &q1b, -1).await.len(), 1);
    assert!(poll(&engine, 2, &q2, -1).await.is_empty());
    engine.deliver(&parley_events::Event::everyone(parley_events::Body::json(
        json!({"type": "restart"}),
    )));
    assert_eq!(poll(&engine, 2, &q2, -1).await.len(), 1);
}

#[tokio::test]
async fn dont_block_with_nothing_returns_empty() {
    let engine = engine();
    let queue = register(&engine, 1);
    let events = engine
        .get_events(UserId(1), &queue, None, true)
        .await
        .unwrap();
    assert!(events.is_empty());
}

#[tokio::test]
async fn a_waiting_poll_is_woken_by_delivery() {
    let engine = Engine::new(EngineConfig {
        heartbeat: Duration::from_secs(30),
        ..EngineConfig::default()
    });
    let queue = register(&engine, 1);
    let waiter = tokio::spawn({
        let engine = engine.clone();
        let queue = queue.clone();
        async move { engine.get_events(UserId(1), &queue, Some(-1), false).await }
    });
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    engine.deliver(&json_event(&[1], "wake"));
    let events = waiter.await.unwrap().unwrap();
    assert_eq!(types(&events), ["wake"]);
    assert_eq!(engine.waiting_count(), 0);
}

#[tokio::test]
async fn a_blocking_poll_returns_pending_events_at_once() {
    let engine = engine();
    let queue = register(&engine, 1);
    engine.deliver(&json_event(&[1], "x"));
    let events = engine
        .get_events(UserId(1), &queue, Some(-1), false)
        .await
        .unwrap();
    assert_eq!(types(&events), ["x"]);
}

#[tokio::test]
async fn a_heartbeat_comes_when_nothing_happens() {
    let engine = engine();
    let queue = register(&engine, 1);
    let events = engine
        .get_events(UserId(1), &queue, Some(-1), false)
        .await
        .unwrap();
    assert_eq!(events, [json!({"type": "heartbeat", "id": 0})]);
    // The heartbeat is a real event: it is acknowledged like the others.
    assert!(poll(&engine, 1, &queue, 0).await.is_empty());
}

#[tokio::test]
async fn heartbeats_pass_the_event_type_filter() {
    let engine = engine();
    let mut options = opts(1);
    options.event_types = Some(["message".to_owned()].into());
    let (queue, _) = engine.register(options);
    let events = engine
        .get_events(UserId(1), &queue, Some(-1), false)
        .await
        .unwrap();
    assert_eq!(types(&events), ["heartbeat"]);
}

#[tokio::test]
async fn a_newer_poll_releases_the_older_one() {
    let engine = Engine::new(EngineConfig {
        heartbeat: Duration::from_secs(30),
        ..EngineConfig::default()
    });
    let queue = register(&engine, 1);
    let first = tokio::spawn({
        let engine = engine.clone();
        let queue = queue.clone();
        async move { engine.get_events(UserId(1), &queue, Some(-1), false).await }
    });
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    let second = tokio::spawn({
        let engine = engine.clone();
        let queue = queue.clone();
        async move { engine.get_events(UserId(1), &queue, Some(-1), false).await }
    });
    assert!(first.await.unwrap().unwrap().is_empty());
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    engine.deliver(&json_event(&[1], "x"));
    assert_eq!(types(&second.await.unwrap().unwrap()), ["x"]);
}

#[tokio::test]
async fn unknown_and_foreign_queues_are_the_same_error() {
    let engine = engine();
    let queue = register(&engine, 1);
    for (user, id) in [(1, "nope"), (2, queue.as_str())] {
        let err = engine
            .get_events(UserId(user), id, Some(-1), true)
            .await
            .unwrap_err();
        assert!(matches!(&err, EventsError::BadQueueId(q) if q == id));
        assert_eq!(err.to_string(), format!("Bad event queue ID: {id}"));
    }
    assert!(matches!(
        engine.delete_queue(UserId(2), &queue),
        Err(EventsError::BadQueueId(_))
    ));
    assert!(engine.queue_belongs_to(UserId(1), &queue));
    assert!(!engine.queue_belongs_to(UserId(2), &queue));
}

#[tokio::test]
async fn acknowledging_unknown_events_is_refused() {
    let engine = engine();
    let queue = register(&engine, 1);
    engine.deliver(&json_event(&[1], "a"));
    engine.deliver(&json_event(&[1], "b"));
    let err = engine
        .get_events(UserId(1), &queue, Some(5), true)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Event 5 was not in this queue");
    assert_eq!(ids(&poll(&engine, 1, &queue, 0).await), [1]);
    let err = engine
        .get_events(UserId(1), &queue, Some(-1), true)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "An event newer than -1 has already been pruned!"
    );
}

#[tokio::test]
async fn deleted_queues_are_gone_and_release_their_poll() {
    let engine = Engine::new(EngineConfig {
        heartbeat: Duration::from_secs(30),
        ..EngineConfig::default()
    });
    let queue = register(&engine, 1);
    let other = register(&engine, 1);
    let waiter = tokio::spawn({
        let engine = engine.clone();
        let queue = queue.clone();
        async move { engine.get_events(UserId(1), &queue, Some(-1), false).await }
    });
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    engine.delete_queue(UserId(1), &queue).unwrap();
    assert!(matches!(
        waiter.await.unwrap(),
        Err(EventsError::BadQueueId(_))
    ));
    assert_eq!(engine.waiting_count(), 0);
    assert_eq!(engine.queue_count(), 1);
    engine.delete_user_queues(UserId(1));
    assert_eq!(engine.queue_count(), 0);
    assert!(!engine.queue_belongs_to(UserId(1), &other));
}

#[tokio::test]
async fn idle_queues_are_collected_but_not_waited_on_ones() {
    let engine = Engine::new(EngineConfig {
        queue_timeout: Duration::from_millis(20),
        heartbeat: Duration::from_secs(30),
        ..EngineConfig::default()
    });
    let idle = register(&engine, 1);
    let polled = register(&engine, 2);
    let waiter = tokio::spawn({
        let engine = engine.clone();
        let polled = polled.clone();
        async move { engine.get_events(UserId(2), &polled, Some(-1), false).await }
    });
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert_eq!(engine.collect_garbage(), 1);
    assert!(!engine.queue_belongs_to(UserId(1), &idle));
    assert!(engine.queue_belongs_to(UserId(2), &polled));
    engine.deliver(&json_event(&[2], "x"));
    assert_eq!(waiter.await.unwrap().unwrap().len(), 1);
}

#[tokio::test]
async fn the_gc_task_collects_periodically() {
    let engine = Engine::new(EngineConfig {
        queue_timeout: Duration::from_millis(10),
        gc_interval: Duration::from_millis(10),
        ..EngineConfig::default()
    });
    register(&engine, 1);
    let task = engine.spawn_gc();
    while engine.queue_count() > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    task.abort();
}

#[tokio::test]
async fn an_overflowing_queue_is_dropped() {
    let engine = Engine::new(EngineConfig {
        max_queue_events: 3,
        ..EngineConfig::default()
    });
    let full = register(&engine, 1);
    let reading = register(&engine, 1);
    for i in 0..3 {
        engine.deliver(&json_event(&[1], "x"));
        poll(&engine, 1, &reading, i).await;
    }
    assert!(engine.queue_belongs_to(UserId(1), &full));
    engine.deliver(&json_event(&[1], "x"));
    assert!(!engine.queue_belongs_to(UserId(1), &full));
    assert!(matches!(
        engine.get_events(UserId(1), &full, Some(-1), true).await,
        Err(EventsError::BadQueueId(_))
    ));
    assert_eq!(ids(&poll(&engine, 1, &reading, 2).await), [3]);
}

#[tokio::test]
async fn the_bus_delivers_in_order() {
    let engine = engine();
    let queue = register(&engine, 1);
    let bus = InProcessBus::new(engine.clone());
    bus.publish(&[json_event(&[1], "a"), json_event(&[1], "b")]);
    assert_eq!(types(&poll(&engine, 1, &queue, -1).await), ["a", "b"]);
}

#[tokio::test]
async fn closing_releases_waiting_polls_and_stops_waiting() {
    let engine = Engine::new(EngineConfig {
        heartbeat: Duration::from_secs(3600),
        ..EngineConfig::default()
    });
    let queue = register(&engine, 1);
    let waiter = {
        let engine = engine.clone();
        let queue = queue.clone();
        tokio::spawn(async move { engine.get_events(UserId(1), &queue, None, false).await })
    };
    while engine.waiting_count() == 0 {
        tokio::task::yield_now().await;
    }
    engine.close();
    let events = waiter.await.unwrap().unwrap();
    assert!(
        events.is_empty(),
        "a released poll returns what there is: nothing"
    );
    // Later blocking polls answer at once.
    let events = engine
        .get_events(UserId(1), &queue, None, false)
        .await
        .unwrap();
    assert!(events.is_empty());
}
