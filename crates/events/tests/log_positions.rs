//! Delivery from an event log: entries carry positions, a queue whose snapshot was read at a
//! position receives exactly the entries above it, and an entry read twice is applied once.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;

#[tokio::test]
async fn a_queue_receives_exactly_the_entries_above_its_snapshot() {
    let engine = engine();
    engine.set_position(10);
    // Snapshot read at 12, engine still at 10: entries 11 and 12 are in the snapshot.
    let q = engine.register_after(opts(1), "a".into(), 12, &[]).unwrap();
    engine.deliver_logged(11, &[json_event(&[1], "e11")]);
    engine.deliver_logged(12, &[json_event(&[1], "e12")]);
    engine.deliver_logged(13, &[json_event(&[1], "e13")]);
    // Read twice: applied once.
    engine.deliver_logged(13, &[json_event(&[1], "e13")]);
    engine.deliver_logged(14, &[json_event(&[1], "e14"), json_event(&[1], "e14b")]);
    let events = poll(&engine, 1, &q, -1).await;
    assert_eq!(types(&events), ["e13", "e14", "e14b"]);
    assert_eq!(engine.position(), 14);
}

#[tokio::test]
async fn a_queue_behind_the_engine_catches_up_from_the_backlog() {
    let engine = engine();
    engine.set_position(3);
    engine.deliver_logged(4, &[json_event(&[1], "e4")]);
    engine.deliver_logged(5, &[json_event(&[1], "e5")]);
    // Snapshot read at 3; the engine is at 5: without the backlog it must be asked for.
    assert_eq!(engine.register_after(opts(1), "b".into(), 3, &[]), Err(5));
    let backlog = vec![
        (4, vec![json_event(&[1], "e4")]),
        (
            5,
            vec![json_event(&[2], "not-mine"), json_event(&[1], "e5")],
        ),
        (6, vec![json_event(&[1], "e6-not-yet-delivered")]),
    ];
    let q = engine
        .register_after(opts(1), "b".into(), 3, &backlog)
        .unwrap();
    // Entry 6 comes from the engine's own delivery, once.
    engine.deliver_logged(6, &[json_event(&[1], "e6")]);
    let events = poll(&engine, 1, &q, -1).await;
    assert_eq!(types(&events), ["e4", "e5", "e6"]);
}
