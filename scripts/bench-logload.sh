#!/usr/bin/env bash
# What access logging costs under full HTTP load, goha and HAProxy side by
# side, on loopback only.
#
# Both proxies get the shared bench harness's configuration (nbthread 2,
# http-reuse always, keep-alive, round-robin over $BACKENDS ports of the
# shared bench backend), once as it is and once with
#     log 127.0.0.1:<sink> local0   (in global)
#     log global + option httplog   (in defaults)
# where <sink> is a UDP socket that ring/bench/ringbench's udpsink reads
# and discards (SINK=socat: socat, which costs three system calls per
# datagram instead of one, on the same two cores), so every request sends
# one syslog datagram; with TARGET=ring the log line is
#     log ring@r local0             (in global)
# and a `ring r` section (format rfc5424, 1 MiB, legacy framing) forwards
# the events to a TCP socket that socat reads and discards. Rounds interleave the four
# configurations (goha/HAProxy x off/on, reversed every other round); each
# run is a wrk warm-up, then DURATION seconds measured. The table gives
# medians: req/s, the proxy's CPU per request (user+system from /proc, less
# noisy than req/s on a shared machine) and, per proxy, the change that
# turning logs on makes to each.
#
# Every process it starts is stopped by its PID; nothing is killed by name.
#
# Usage: scripts/bench-logload.sh          (knobs are environment variables)
#   CONNS=100 ROUNDS=3 DURATION=5 WARMUP=1 BACKENDS=8 TARGET=udp|ring
#   SINK=udpsink|socat (TARGET=udp)
#   GOHA=      a goha binary (default: build the committed HEAD)
#   HAPROXY=/usr/sbin/haproxy  BACKEND_SRC=/work/shared/bench/backend
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONNS=${CONNS:-100}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
BACKENDS=${BACKENDS:-8}
TARGET=${TARGET:-udp}
SINK=${SINK:-udpsink}
GOHA=${GOHA:-}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
BACKEND_SRC=${BACKEND_SRC:-/work/shared/bench/backend}

. "$ROOT/scripts/lib.sh"
BENCH_NAME=bench-logload
for tool in wrk socat go ss "$HAPROXY"; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
bench_init bench-logload

echo "building..." >&2
if [[ -z $GOHA ]]; then
  mkdir "$WORK/src"
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
  echo "goha at $(git -C "$ROOT" rev-parse --short HEAD)" >&2
  (cd "$WORK/src" && go build -o "$WORK/goha" ./cmd/goha)
  GOHA=$WORK/goha
fi
(cd "$BACKEND_SRC" && go build -o "$WORK/backend" .)
(cd "$ROOT" && go build -o "$WORK/ringbench" ./ring/bench/ringbench)
cd "$WORK"

BASE=$(free_range $((BACKENDS + 2)) 21000)
LB_PORT=$((BASE + BACKENDS))
SINK_PORT=$((BASE + BACKENDS + 1))
"$WORK/backend" -base "$BASE" -n "$BACKENDS" >"$WORK/backend.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$WORK/backend.log" && break; sleep 0.1; done
grep -q ready "$WORK/backend.log" || die "backend did not start: $(cat "$WORK/backend.log")"
if [[ $TARGET == ring ]]; then
  socat -u "TCP-LISTEN:$SINK_PORT,bind=127.0.0.1,reuseaddr,fork" /dev/null &
elif [[ $SINK == socat ]]; then
  socat -u "UDP-RECV:$SINK_PORT,bind=127.0.0.1" /dev/null &
else
  "$WORK/ringbench" udpsink -listen "127.0.0.1:$SINK_PORT" -status "$WORK/sink.status" &
fi
PIDS+=($!)

gen_cfg() { # on|off
  if [[ $1 == on && $TARGET == ring ]]; then
    echo "ring r"
    echo "    format rfc5424"
    echo "    maxlen 1024"
    echo "    size 1048576"
    echo "    timeout connect 5s"
    echo "    timeout server 10s"
    echo "    server sink 127.0.0.1:$SINK_PORT log-proto legacy"
  fi
  echo "global"
  echo "    nbthread 2"
  echo "    maxconn 8000"
  if [[ $1 == on ]]; then
    if [[ $TARGET == ring ]]; then
      echo "    log ring@r local0"
    else
      echo "    log 127.0.0.1:$SINK_PORT local0"
    fi
  fi
  echo "defaults"
  echo "    mode http"
  echo "    maxconn 4096"
  echo "    option http-keep-alive"
  echo "    http-reuse always"
  echo "    timeout connect 5s"
  echo "    timeout client 30s"
  echo "    timeout server 30s"
  echo "    timeout http-keep-alive 30s"
  if [[ $1 == on ]]; then
    echo "    log global"
    echo "    option httplog"
  fi
  echo "frontend fe_bench"
  echo "    bind 127.0.0.1:$LB_PORT"
  echo "    default_backend be_bench"
  echo "backend be_bench"
  echo "    balance roundrobin"
  local i
  for ((i = 0; i < BACKENDS; i++)); do echo "    server s$((i + 1)) 127.0.0.1:$((BASE + i))"; done
}

# run proxy on|off: prints "rps cpu-us/req errors"
run() {
  local cfg=$WORK/$1-$2.cfg pid out c0 c1 reqs rps errs
  gen_cfg "$2" >"$cfg"
  start_proxy "$1" "$cfg" "$LB_PORT"
  pid=$PROXY_PID
  wrk -c "$CONNS" -t 1 -d "${WARMUP}s" --timeout 5s "http://127.0.0.1:$LB_PORT/" >/dev/null
  c0=$(cputicks "$pid")
  out=$(wrk -c "$CONNS" -t 1 -d "${DURATION}s" --timeout 5s "http://127.0.0.1:$LB_PORT/")
  c1=$(cputicks "$pid")
  stop_pid "$pid"
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  reqs=$(awk '/ requests in / {print $1}' <<<"$out")
  errs=$(awk '/Socket errors:|Non-2xx/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) s += $i} END {print s + 0}' <<<"$out")
  awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v r="$reqs" -v rps="$rps" -v e="$errs" \
    'BEGIN {printf "%s %.1f %d\n", rps, (r > 0 ? 1e6 * c / hz / r : 0), e}'
}

CONFIGS=("goha off" "goha on" "haproxy off" "haproxy on")
: >"$WORK/runs"
for ((r = 1; r <= ROUNDS; r++)); do
  order=("${CONFIGS[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#CONFIGS[@]} - 1; i >= 0; i--)); do order+=("${CONFIGS[$i]}"); done
  fi
  for cf in "${order[@]}"; do
    res=$(run $cf)
    echo "round $r: $cf: $res" >&2
    echo "$cf $res" >>"$WORK/runs"
  done
done

echo
[[ $TARGET == udp ]] && echo "UDP sink: $SINK"
echo "logs to $TARGET; wrk -t1 -c$CONNS, ${DURATION}s per run, $ROUNDS interleaved rounds, $BACKENDS backends (medians)"
echo
echo "| proxy | logs | req/s | CPU µs/req | errors |"
echo "|---|---|---:|---:|---:|"
declare -A RPS CPU
for cf in "${CONFIGS[@]}"; do
  set -- $cf
  RPS[$cf]=$(awk -v p="$1" -v l="$2" '$1 == p && $2 == l {print $3}' "$WORK/runs" | median)
  CPU[$cf]=$(awk -v p="$1" -v l="$2" '$1 == p && $2 == l {print $4}' "$WORK/runs" | median)
  errs=$(awk -v p="$1" -v l="$2" '$1 == p && $2 == l {s += $5} END {print s + 0}' "$WORK/runs")
  echo "| $1 | $2 | ${RPS[$cf]} | ${CPU[$cf]} | $errs |"
done
echo
for p in goha haproxy; do
  awk -v p="$p" -v r0="${RPS[$p off]}" -v r1="${RPS[$p on]}" -v c0="${CPU[$p off]}" -v c1="${CPU[$p on]}" \
    'BEGIN {printf "%s: logs on change req/s by %+.1f%% and CPU per request by %+.1f%%\n", p, 100 * (r1 / r0 - 1), 100 * (c1 / c0 - 1)}'
done
echo
echo "every run (proxy logs req/s cpu-us/req errors):"
cat "$WORK/runs"
