"""WAL bytes one channel send writes on SQLite, by channel size: on a copy of a seeded database
(`BENCH_MESSAGES=300000 cargo bench -p parley-tests --bench scale` leaves one at
tests/target/bench-scale/parley.db), inserts a message and its per-recipient rows as a send does,
with automatic checkpoints off, and reads the log's size after each commit.

Usage: python3 wal_per_send.py COPY_OF_parley.db
"""
import sqlite3, os, sys
db = sys.argv[1]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL"); con.execute("PRAGMA wal_autocheckpoint=0")
def biggest(n):
    return con.execute("""select channel_id, count(*) c from subscriptions where active group by channel_id
                          order by abs(count(*) - ?) limit 1""", (n,)).fetchone()
cols = "sender_id, channel_id, topic, topic_key, content, rendered_content, date_sent, client"
for members in (10, 100, 1000):
    channel, count = biggest(members)
    sizes = []
    for attempt in range(5):
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("BEGIN IMMEDIATE")
        cur = con.execute(f"INSERT INTO messages ({cols}) SELECT {cols} FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1", (channel,))
        mid = cur.lastrowid
        con.execute("INSERT INTO user_messages (user_id, message_id, flags) SELECT user_id, ?, 0 FROM subscriptions WHERE channel_id = ? AND active", (mid, channel))
        con.execute("COMMIT")
        sizes.append(os.path.getsize(db + "-wal"))
    print(f"{count} recipients: WAL bytes per send {sorted(sizes)[2]:,} (median of 5; {sorted(sizes)[2] / 4096:.0f} pages)")
