"""WAL bytes one channel send writes on SQLite, by channel size: on a copy of a seeded database
(`BENCH_MESSAGES=300000 cargo bench -p parley-tests --bench scale` leaves one at
tests/target/bench-scale/parley.db), inserts a message as a send does, with automatic
checkpoints off, and reads the log's size after each commit.

Two ways of sending:
  rows  (default) the representation before issue 15: one `user_messages` row per active
        subscriber. On a database in the new representation, first rebuild the whole rows
        (migrations/sqlite/2026-11-26-000081_sparse_user_messages/down.sql).
  spans issue 15's representation: the message row and the sender's read range (its newest
        range of the channel extended to the new message, as `read_ranges::add` does: one
        delete and one insert), nothing per recipient.

Usage: python3 wal_per_send.py COPY_OF_parley.db [rows|spans]
"""
import sqlite3, os, sys
db = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "rows"
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL"); con.execute("PRAGMA wal_autocheckpoint=0")
def biggest(n):
    return con.execute("""select channel_id, count(*) c from subscriptions where active group by channel_id
                          order by abs(count(*) - ?) limit 1""", (n,)).fetchone()
cols = "sender_id, channel_id, topic, topic_key, content, rendered_content, date_sent, client"
def per_recipient_rows(mid, channel):
    con.execute("INSERT INTO user_messages (user_id, message_id, flags) SELECT user_id, ?, 0 FROM subscriptions WHERE channel_id = ? AND active", (mid, channel))
def senders_read_range(mid, channel):
    sender = con.execute("SELECT sender_id FROM messages WHERE id = ?", (mid,)).fetchone()[0]
    last = con.execute("SELECT low, high FROM read_ranges WHERE user_id = ? AND channel_id = ? ORDER BY high DESC LIMIT 1", (sender, channel)).fetchone()
    low = mid
    if last is not None:
        con.execute("DELETE FROM read_ranges WHERE user_id = ? AND channel_id = ? AND high = ?", (sender, channel, last[1]))
        low = last[0]
    con.execute("INSERT INTO read_ranges (user_id, channel_id, low, high) VALUES (?, ?, ?, ?)", (sender, channel, low, mid))
write = {"rows": per_recipient_rows, "spans": senders_read_range}[mode]
for members in (10, 100, 1000):
    channel, count = biggest(members)
    sizes = []
    for attempt in range(5):
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("BEGIN IMMEDIATE")
        cur = con.execute(f"INSERT INTO messages ({cols}) SELECT {cols} FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1", (channel,))
        mid = cur.lastrowid
        write(mid, channel)
        con.execute("COMMIT")
        sizes.append(os.path.getsize(db + "-wal"))
    print(f"{mode}: {count} recipients: WAL bytes per send {sorted(sizes)[2]:,} (median of 5; {sorted(sizes)[2] / 4096:.0f} pages)")
