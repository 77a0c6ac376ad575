#!/bin/bash
# CPU time and context switches of an idle `parley` process on PostgreSQL over 10 s (after 3 s
# to settle), summed over its threads: what it costs a machine to keep it running.
#
#   tests/load/idle_cpu.sh BINARY [database, scale]
set -euo pipefail
BIN=$1; DB=${2:-scale}; PORT=9413
WORK=$(mktemp -d)
"$BIN" serve --bind 127.0.0.1:$PORT --data-dir "$WORK/data" \
    --database-url "postgres://root@127.0.0.1/$DB" > "$WORK/server.log" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null; rm -rf "$WORK"' EXIT
until curl -sf http://127.0.0.1:$PORT/health >/dev/null; do sleep 0.2; done
sleep 3
switches() { cat /proc/$SPID/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
c0=$(awk '{print $14 + $15}' /proc/$SPID/stat); s0=$(switches)
sleep 10
c1=$(awk '{print $14 + $15}' /proc/$SPID/stat); s1=$(switches)
echo "$(basename "$BIN"): idle CPU $(( (c1 - c0) * 1000 / $(getconf CLK_TCK) )) ms in 10 s, context switches $((s1 - s0))"
