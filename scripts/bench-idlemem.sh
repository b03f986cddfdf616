#!/usr/bin/env bash
# Resident memory of goha and HAProxy holding many idle keep-alive client
# connections, on loopback only.
#
# For each proxy: start it on the same configuration (nbthread 2, maxconn
# above the client count, http-keep-alive 60s, one backend), read VmRSS,
# open $CLIENTS connections one by one with one request each
# (scripts/idleclients), leave them idle, read VmRSS again after $SETTLE
# seconds, and stop everything it started (by PID).
#
# Usage: scripts/bench-idlemem.sh       (knobs are environment variables)
#   CLIENTS=9900  SETTLE=5  GOHA= (a goha binary; default: build ./cmd/goha)
#   HAPROXY=/usr/sbin/haproxy  BACKEND_SRC=/work/shared/bench/backend
# ulimit -n must exceed twice CLIENTS plus some (the client and the proxy
# each hold one descriptor per connection).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLIENTS=${CLIENTS:-9900}
SETTLE=${SETTLE:-5}
GOHA=${GOHA:-}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
BACKEND_SRC=${BACKEND_SRC:-/work/shared/bench/backend}

. "$ROOT/scripts/lib.sh"
BENCH_NAME=bench-idlemem
(( $(ulimit -n) > CLIENTS + 100 )) || die "ulimit -n $(ulimit -n) is too low for $CLIENTS clients"
bench_init bench-idlemem

echo "building..." >&2
if [[ -z $GOHA ]]; then
  (cd "$ROOT" && go build -o "$WORK/goha" ./cmd/goha)
  GOHA=$WORK/goha
fi
(cd "$ROOT" && go build -o "$WORK/idleclients" ./scripts/idleclients)
(cd "$BACKEND_SRC" && go build -o "$WORK/backend" .)

PORT=$(free_range 2 22000)
"$WORK/backend" -base "$((PORT + 1))" -n 1 >"$WORK/backend.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$WORK/backend.log" && break; sleep 0.1; done

cat >"$WORK/proxy.cfg" <<CFG
global
    nbthread 2
    maxconn $((CLIENTS + 90))
defaults
    mode http
    maxconn $((CLIENTS + 90))
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
frontend fe
    bind 127.0.0.1:$PORT
    default_backend be
backend be
    server s1 127.0.0.1:$((PORT + 1))
CFG

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

echo "| proxy | RSS at start | RSS with $CLIENTS idle clients | per idle client |"
echo "|---|---:|---:|---:|"
for proxy in haproxy goha; do
  start_proxy "$proxy" "$WORK/proxy.cfg" "$PORT"
  pid=$PROXY_PID
  sleep 0.5
  r0=$(rss "$pid")
  "$WORK/idleclients" -addr "127.0.0.1:$PORT" -n "$CLIENTS" >"$WORK/clients.log" 2>&1 &
  cpid=$!
  PIDS+=("$cpid")
  for _ in $(seq 600); do
    grep -q '^ready' "$WORK/clients.log" && break
    kill -0 "$cpid" 2>/dev/null || die "idleclients failed: $(cat "$WORK/clients.log")"
    sleep 0.1
  done
  grep -q '^ready' "$WORK/clients.log" || die "idleclients did not finish"
  sleep "$SETTLE"
  r1=$(rss "$pid")
  stop_pid "$cpid"
  stop_pid "$pid"
  awk -v p="$proxy" -v a="$r0" -v b="$r1" -v n="$CLIENTS" \
    'BEGIN {printf "| %s | %.1f MB | %.1f MB | %.1f KB |\n", p, a / 1024, b / 1024, (b - a) / n}'
done
