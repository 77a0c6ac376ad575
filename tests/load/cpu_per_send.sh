#!/bin/bash
# CPU per channel send, split between the `parley` process and PostgreSQL's backends, on a
# database the scale benchmark seeded (tests/benches/scale.rs with BENCH_DATABASE_NAME=scale).
# Eight `ab` clients (apache2-utils), one member each, send N messages each, one at a time, to
# one channel (channel 63: 266 members, the benchmark's mean); the figures are CPU time
# (utime + stime from /proc) divided by the sends, so they hold on a busy machine better than
# a rate does; and how much of the machine's CPU time was idle meanwhile (what faster commits
# could use at most).
#
#   tests/load/cpu_per_send.sh BINARY [N per sender, 150] [member offset, 0] [database, scale]
#
# The API allows 200 requests a minute per user: give each run of the same minute its own
# offset (8, 16, ...). BODY_EXTRA adds parameters to each send (`&read_by_sender=true`: the
# sender's own copy read, as the web and mobile apps send).
set -euo pipefail
BIN=$1; N=${2:-150}; OFF=${3:-0}; DB=${4:-scale}; PORT=9311
WORK=$(mktemp -d)
trap 'kill $SPID 2>/dev/null; rm -rf "$WORK"' EXIT
"$BIN" serve --bind 127.0.0.1:$PORT --data-dir "$WORK/data" \
    --database-url "postgres://root@127.0.0.1/$DB" > "$WORK/server.log" 2>&1 &
SPID=$!
until curl -sf http://127.0.0.1:$PORT/health >/dev/null; do sleep 0.2; done
psql -h 127.0.0.1 -U root -d "$DB" -Atc "SELECT u.delivery_email || ':' || u.api_key
    FROM subscriptions s JOIN users u ON u.id = s.user_id
    WHERE s.channel_id = 65 AND s.active AND u.is_active ORDER BY u.id LIMIT 8 OFFSET $OFF" > "$WORK/users"
printf 'type=stream&to=channel%%2063&topic=cpu&content=cpu+message+about+the+**release**+meeting%s' "${BODY_EXTRA:-}" > "$WORK/body"
send() { ab -q -n "$2" -c 1 -A "$1" -p "$WORK/body" -T application/x-www-form-urlencoded \
    http://127.0.0.1:$PORT/api/v1/messages; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pg_cpu() { local t=0 p; for p in $(pgrep -f "root $DB" || true); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
while read -r u; do send "$u" 2 > /dev/null 2>&1; done < "$WORK/users"   # warm up
idle() { awk '/^cpu / {print $5 + $6}' /proc/stat; }   # idle + iowait, all CPUs, in ticks
s0=$(cpu $SPID); p0=$(pg_cpu); t0=$(date +%s.%N); c0=$(awk '/^ctxt/ {print $2}' /proc/stat); i0=$(idle)
i=0; pids=()
while read -r u; do send "$u" "$N" > "$WORK/ab.$i" 2>&1 & pids+=($!); i=$((i + 1)); done < "$WORK/users"
wait "${pids[@]}"
s1=$(cpu $SPID); p1=$(pg_cpu); t1=$(date +%s.%N); c1=$(awk '/^ctxt/ {print $2}' /proc/stat); i1=$(idle)
ok=$(cat "$WORK"/ab.* | awk '/Complete requests/ {s += $3} END {print s}')
bad=$(cat "$WORK"/ab.* | awk '/Non-2xx/ {s += $3} END {print s + 0}')
python3 -c "
n, hz, el = $ok, $(getconf CLK_TCK), $t1 - $t0
print(f'sends {n} (non-2xx {$bad}) in {el:.2f}s = {n / el:.0f}/s; parley CPU '
      f'{($s1 - $s0) * 1000 / hz / n:.3f} ms/send; PostgreSQL backends CPU '
      f'{($p1 - $p0) * 1000 / hz / n:.3f} ms/send; context switches (machine) {($c1 - $c0) / n:.1f}/send; '
      f'machine idle {100 * ($i1 - $i0) / hz / el / $(nproc):.0f} % of its {$(nproc)} CPUs')"
