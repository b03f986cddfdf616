#!/usr/bin/env bash
# Stick tables over the peers protocol, goha beside HAProxy 2.6, on loopback:
#  - memory per entry: the sender's resident memory grows by this much per
#    stick-table entry (a string key of about 20 bytes with http_req_cnt and
#    http_req_rate), entries made by requests (wrk, one new key each);
#  - updates pushed per second: a peer that starts after the table is full
#    gets it all from the sender (a full resync); the rate is the entries
#    over the time from the peer's start to its table holding them all. The
#    peer is always HAProxy, so that only the sender differs.
# Every process is started here and stopped by its PID.
#
# Usage: scripts/bench-peers.sh [rounds]   FILL=3s (wrk duration)
#   GOHA= (a goha binary; default: build ./cmd/goha)  HAPROXY=/usr/sbin/haproxy
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${1:-2}
FILL=${FILL:-3s}
GOHA=${GOHA:-}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
. "$ROOT/scripts/lib.sh"
bench_init bench-peers
if [[ -z $GOHA ]]; then
  (cd "$ROOT" && go build -o "$WORK/goha" ./cmd/goha)
  GOHA=$WORK/goha
fi

base=$(free_range 4 23000)
PF=$base PA=$((base + 1)) PB=$((base + 2)) PFB=$((base + 3))
# conf NAME FRONTPORT: one peer's configuration (both peers read the same
# but for their socket and frontend port).
conf() {
  cat <<CFG
global
    nbthread 2
    stats socket $WORK/$1.sock level admin
peers p
    peer A 127.0.0.1:$PA
    peer B 127.0.0.1:$PB
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$2
    http-request track-sc0 req.hdr(x-k) table t
    http-request return status 200
backend t
    stick-table type string len 32 size 4m expire 30m peers p store http_req_cnt,http_req_rate(10s)
CFG
}
conf A "$PF" >"$WORK/A.cfg"
conf B "$PFB" >"$WORK/B.cfg"
cat >"$WORK/keys.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/", { ["x-k"] = "key-" .. n .. "-" .. math.random(100000000) })
end
LUA

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
used() { echo "show table t" | socat - "UNIX-CONNECT:$1" 2>/dev/null | awk -F'used:' '/^# table/ && !d {print $2+0; d=1}' || true; }
now() { date +%s.%N; }

echo "| sender | round | entries | RSS growth (MiB) | bytes per entry | resync to HAProxy (s) | updates/s |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for r in $(seq "$ROUNDS"); do
  for name in goha haproxy; do
    prog=$GOHA; [[ $name == haproxy ]] && prog=$HAPROXY
    "$prog" -db -L A -f "$WORK/A.cfg" >"$WORK/A.log" 2>&1 &
    a=$!; PIDS+=("$a")
    for _ in $(seq 100); do [[ -S $WORK/A.sock ]] && ss -Htln "sport = :$PF" | grep -q . && break; sleep 0.05; done
    sleep 0.3
    before=$(rss_kb "$a")
    wrk -t1 -c50 -d"$FILL" -s "$WORK/keys.lua" "http://127.0.0.1:$PF/" >/dev/null 2>&1 || true
    n=$(used "$WORK/A.sock")
    after=$(rss_kb "$a")
    t0=$(now)
    "$HAPROXY" -db -L B -f "$WORK/B.cfg" >"$WORK/B.log" 2>&1 &
    b=$!; PIDS+=("$b")
    got=0
    for _ in $(seq 1200); do
      got=$(used "$WORK/B.sock" || echo 0)
      [[ ${got:-0} -ge $n ]] && break
      sleep 0.05
    done
    t1=$(now)
    stop_pid "$b"; stop_pid "$a"
    rm -f "$WORK/A.sock" "$WORK/B.sock"
    awk -v name="$name" -v r="$r" -v n="$n" -v got="$got" -v b="$before" -v a="$after" -v t0="$t0" -v t1="$t1" 'BEGIN {
      s = t1 - t0
      if (got < n) { printf "| %s | %d | %d | %.1f | %.0f | (only %d synced) | - |\n", name, r, n, (a-b)/1024, (a-b)*1024/n, got; exit }
      printf "| %s | %d | %d | %.1f | %.0f | %.2f | %.0f |\n", name, r, n, (a-b)/1024, (a-b)*1024/n, s, n/s }'
  done
done
