#!/usr/bin/env bash
# Ring benchmark (issue 6): events per second from a proxy into a ring and
# out to a TCP syslog sink, goha side by side with HAProxy 2.6, for both
# framings (log-proto legacy and octet-count), on loopback only.
#
# Both proxies read the same configuration file: the same `ring r` section
# (format rfc5424, size $RING_SIZE, one server with the framing under test)
# and the same sink (ringbench sink, which splits the stream with the
# framing, checks every event and counts events and bytes). The events come
# two ways:
#   relay  UDP datagrams into a `log-forward` section (`dgram-bind`, then
#          `log ring@r local0`), offered at $RATE/s by ringbench send for
#          $DURATION s; each carries "seq=N", so the sink also checks order.
#   http   the data path: a frontend with `log ring@r local0`,
#          `option httplog`, in front of one tiny backend, under
#          wrk -t1 -c$CONNS for $DURATION s: one event per request.
#   http-nolog  the same without the `log` line (the ring still connected),
#          so that the cost of logging shows apart from the cost of
#          proxying: CPU us/event (http) minus CPU us/request (http-nolog).
# Both proxies run one thread (nbthread 1; goha also with GOMAXPROCS=1).
#
# Per run it reports the events delivered per second of load, the proxy's
# CPU time (utime+stime from /proc/<pid>/stat) per delivered event, and
# the checks: events lost (relay: datagrams sent - events delivered, which
# includes datagrams the kernel dropped before the proxy read them, shown
# apart as udp-rcvbuf-errors; http: requests wrk completed - events), bad
# (an event that is not a whole "<134>1 ..." line with the expected text, or
# a stream that cannot be framed), out of order, and the ring's own drop
# count (`show events` on the stats socket). Proxies alternate inside each
# round (H G G H ...); the table gives the medians over the rounds and
# goha's ratio to HAProxy.
#
# Every process it starts is stopped by its PID; nothing is killed by name.
# With the defaults a run takes about 2 minutes (30 runs of 2 s plus start,
# warm-up and drain).
#
# Usage: scripts/bench-ring.sh            (knobs are environment variables)
#   ROUNDS=3            interleaved rounds     DURATION=2     seconds of load per run
#   MODES="relay http http-nolog"              PROTOS="legacy octet-count"
#   RATE=50000          relay datagrams/s      CONNS=50       wrk connections
#   RING_SIZE=1048576   ring size in bytes
#   BACKEND_SRC=/work/shared/bench/backend (the shared bench backend's source)
#   HAPROXY=/usr/sbin/haproxy
#   GOHA=               a goha binary to use instead of building one
#   SRC=tree            build ./cmd/goha from the work tree; SRC=head builds
#                       the committed HEAD, SRC=<commit> that commit (git
#                       archive, so that edits in progress do not leak in)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-2}
MODES=${MODES:-"relay http http-nolog"}
PROTOS=${PROTOS:-"legacy octet-count"}
RATE=${RATE:-50000}
CONNS=${CONNS:-50}
RING_SIZE=${RING_SIZE:-1048576}
BACKEND_SRC=${BACKEND_SRC:-/work/shared/bench/backend}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
GOHA=${GOHA:-}
SRC=${SRC:-tree}

. "$ROOT/scripts/lib.sh"
BENCH_NAME=bench-ring
for tool in wrk socat curl go ss; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[[ -x $HAPROXY ]] || die "no HAProxy at $HAPROXY"
bench_init bench-ring

echo "building..." >&2
(cd "$ROOT" && go build -o "$WORK/ringbench" ./ring/bench/ringbench)
(cd "$BACKEND_SRC" && go build -o "$WORK/backend" .)
if [[ -z $GOHA ]]; then
  if [[ $SRC == tree ]]; then
    (cd "$ROOT" && go build -o "$WORK/goha" ./cmd/goha)
    echo "goha: work tree at $(git -C "$ROOT" rev-parse --short HEAD)" >&2
  else
    rev=$SRC
    [[ $rev == head ]] && rev=HEAD
    mkdir "$WORK/src"
    git -C "$ROOT" archive "$rev" | tar -x -C "$WORK/src"
    (cd "$WORK/src" && go build -o "$WORK/goha" ./cmd/goha)
    echo "goha: $(git -C "$ROOT" rev-parse --short "$rev")" >&2
  fi
  GOHA=$WORK/goha
fi
cd "$WORK"

BASE=$(free_range 4)
SINK_PORT=$BASE UDP_PORT=$((BASE + 1)) HTTP_PORT=$((BASE + 2)) BACKEND_PORT=$((BASE + 3))
"$WORK/backend" -base "$BACKEND_PORT" -n 1 >"$WORK/backend.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$WORK/backend.log" && break; sleep 0.1; done
grep -q ready "$WORK/backend.log" || die "backend did not start: $(cat "$WORK/backend.log")"

gen_cfg() { # mode proto
  cat <<EOF
global
    nbthread 1
    stats socket $WORK/admin.sock level admin
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
ring r
    format rfc5424
    size $RING_SIZE
    timeout connect 5s
    timeout server 30s
    server sink 127.0.0.1:$SINK_PORT log-proto $2
EOF
  if [[ $1 == relay ]]; then
    cat <<EOF
log-forward lf
    dgram-bind 127.0.0.1:$UDP_PORT
    log ring@r local0
EOF
  else
    cat <<EOF
frontend fe
    bind 127.0.0.1:$HTTP_PORT
EOF
    [[ $1 == http ]] && echo "    log ring@r local0"
    cat <<EOF
    option httplog
    option dontlognull
    default_backend be
backend be
    server s1 127.0.0.1:$BACKEND_PORT
EOF
  fi
}

status() { # field: a number from the sink's status line
  sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" "$WORK/status" 2>/dev/null || true
}

ticks() { # utime+stime of a process, in clock ticks
  awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}

rcvbuf_errors() { # the kernel's UDP receive-buffer drops, system-wide
  awk '$1 == "Udp:" && !h {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
       $1 == "Udp:" {print $col["RcvbufErrors"]}' /proc/net/snmp
}

wait_for() { # field minimum ticks: wait up to ticks x 50 ms for field > minimum
  local i
  for ((i = 0; i < $3; i++)); do
    local v
    v=$(status "$1")
    [[ -n $v ]] && ((v > $2)) && return 0
    sleep 0.05
  done
  return 1
}

HZ=$(getconf CLK_TCK)
RESULTS=$WORK/results
: >"$RESULTS"

# run mode proto impl round: one measurement, appended to $RESULTS.
run() {
  local mode=$1 proto=$2 impl=$3 round=$4 cfg=$WORK/cfg pid sinkpid
  gen_cfg "$mode" "$proto" >"$cfg"
  rm -f "$WORK/status" "$WORK/admin.sock"
  local expect='"GET /ring HTTP/1.1"' seq=()
  if [[ $mode == relay ]]; then expect='seq=' seq=(-seq); fi
  "$WORK/ringbench" sink -listen "127.0.0.1:$SINK_PORT" -proto "$proto" -status "$WORK/status" \
    -prefix '<134>1 ' -expect "$expect" "${seq[@]}" 2>"$WORK/sink.log" &
  sinkpid=$!
  PIDS+=("$sinkpid")
  wait_for events -1 100 || die "sink did not start: $(cat "$WORK/sink.log")"
  if [[ $impl == goha ]]; then
    GOMAXPROCS=1 "$GOHA" -db -f "$cfg" >"$WORK/proxy.log" 2>&1 &
  else
    "$HAPROXY" -db -f "$cfg" >"$WORK/proxy.log" 2>&1 &
  fi
  pid=$!
  PIDS+=("$pid")
  wait_for conns 0 200 || die "$impl did not connect to the sink: $(cat "$WORK/proxy.log")"
  # Warm-up: one event through the whole path.
  local i
  for ((i = 0; i < 100; i++)); do
    if [[ $mode == relay ]]; then
      "$WORK/ringbench" send -to "127.0.0.1:$UDP_PORT" -rate 1000 -dur 10ms -start $((i * 1000)) >/dev/null
    else
      curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/ring" || true
    fi
    [[ $mode == http-nolog ]] && break
    wait_for events 0 4 && break
  done
  [[ $mode == http-nolog ]] || wait_for events 0 20 || die "$impl delivered nothing: $(cat "$WORK/proxy.log")"
  sleep 0.3
  local ev0 b0 c0 u0 t0 t1 offered
  ev0=$(status events) b0=$(status bytes) c0=$(ticks "$pid") u0=$(rcvbuf_errors)
  t0=$(date +%s.%N)
  if [[ $mode == relay ]]; then
    offered=$("$WORK/ringbench" send -to "127.0.0.1:$UDP_PORT" -rate "$RATE" -dur "${DURATION}s" -start 1000000 |
      sed -n 's/^sent=\([0-9]*\).*/\1/p')
  else
    offered=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$HTTP_PORT/ring" |
      sed -n 's/^ *\([0-9]*\) requests in.*/\1/p')
  fi
  t1=$(date +%s.%N)
  # The sink has everything once its count stops moving.
  local last=-1 cur stable=0
  for ((i = 0; i < 200 && stable < 6; i++)); do
    cur=$(status events)
    if [[ $cur == "$last" ]]; then stable=$((stable + 1)); else stable=0 last=$cur; fi
    sleep 0.05
  done
  local c1 ev1 b1 u1 drops
  c1=$(ticks "$pid") ev1=$(status events) b1=$(status bytes) u1=$(rcvbuf_errors)
  drops=$(socat -t 2 stdio "unix-connect:$WORK/admin.sock" <<<"show events" 2>/dev/null |
    sed -n 's/^ *r *: type=buffer, \([0-9]*\) dropped.*/\1/p')
  stop_pid "$pid"
  stop_pid "$sinkpid"
  local ev=$((ev1 - ev0))
  [[ $mode == http-nolog ]] && ev=${offered:-0} # requests, for the CPU per request
  awk -v mode="$mode" -v proto="$proto" -v impl="$impl" -v round="$round" \
    -v ev="$ev" -v bytes=$((b1 - b0)) -v cpu=$((c1 - c0)) -v hz="$HZ" \
    -v secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" -v offered="${offered:-0}" \
    -v rcvbuf=$((u1 - u0)) -v bad="$(status bad)" -v disorder="$(status disorder)" -v drops="${drops:--}" \
    'BEGIN {
      lost = offered - ev; if (lost < 0) lost = 0
      printf "%s %s %s %d %d %.0f %.2f %d %d %d %d %d %s %d\n", mode, proto, impl, round, ev,
        ev / secs, cpu * 1e6 / hz / (ev > 0 ? ev : 1), offered, lost, rcvbuf, bad, disorder, drops, bytes
    }' >>"$RESULTS"
  tail -1 "$RESULTS" >&2
}

echo "ports: sink $SINK_PORT udp $UDP_PORT http $HTTP_PORT backend $BACKEND_PORT; $ROUNDS rounds of ${DURATION}s" >&2
echo "mode proto impl round events events/s cpu-us/event offered lost udp-rcvbuf-errors bad disorder ring-drops bytes" >&2
for ((round = 1; round <= ROUNDS; round++)); do
  if ((round % 2)); then order="haproxy goha"; else order="goha haproxy"; fi
  for mode in $MODES; do
    protos=$PROTOS
    [[ $mode == http-nolog ]] && protos=${PROTOS%% *} # no event: the framing does not matter
    for proto in $protos; do
      for impl in $order; do run "$mode" "$proto" "$impl" "$round"; done
    done
  done
done

echo
echo "Medians over $ROUNDS rounds ($(date -u '+%Y-%m-%d %H:%M UTC'); relay offered $RATE/s, http wrk -t1 -c$CONNS, ${DURATION}s each):"
echo
echo "| source | log-proto | HAProxy events/s | goha events/s | ratio | HAProxy CPU us/event | goha CPU us/event | ratio | lost (H/g) | bad, out of order, ring drops |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|---|"
for mode in $MODES; do
  protos=$PROTOS
  [[ $mode == http-nolog ]] && protos=${PROTOS%% *}
  for proto in $protos; do
    awk -v mode="$mode" -v proto="$proto" '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      $1 == mode && $2 == proto {
        k = $3; n[k]++; rate[k, n[k]] = $6; cpu[k, n[k]] = $7; lost[k] += $9
        bad += $11; dis += $12; if ($13 != "-") drops += $13; else nodrops = 1
      }
      END {
        for (k in n) {
          for (i = 1; i <= n[k]; i++) { r[i] = rate[k, i]; c[i] = cpu[k, i] }
          mr[k] = median(r, n[k]); mc[k] = median(c, n[k])
        }
        printf "| %s | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %d / %d | %d, %d, %s |\n", mode, proto,
          mr["haproxy"], mr["goha"], mr["haproxy"] ? mr["goha"] / mr["haproxy"] : 0,
          mc["haproxy"], mc["goha"], mc["haproxy"] ? mc["goha"] / mc["haproxy"] : 0,
          lost["haproxy"], lost["goha"], bad, dis, nodrops ? "n/a" : drops
      }' "$RESULTS"
  done
done
if [[ " $MODES " == *" http "* && " $MODES " == *" http-nolog "* ]]; then
  echo
  echo "Cost of logging on the data path: median CPU us/event with \`log ring@r\` minus median CPU us/request without:"
  echo
  echo "| log-proto | HAProxy | goha |"
  echo "|---|---:|---:|"
  for proto in $PROTOS; do
    awk -v proto="$proto" -v nolog="${PROTOS%% *}" '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      $1 == "http" && $2 == proto { k = "l" $3; v[k, ++n[k]] = $7 }
      $1 == "http-nolog" && $2 == nolog { k = "n" $3; v[k, ++n[k]] = $7 }
      END {
        for (k in n) { for (i = 1; i <= n[k]; i++) c[i] = v[k, i]; m[k] = median(c, n[k]) }
        printf "| %s | %.2f | %.2f |\n", proto, m["lhaproxy"] - m["nhaproxy"], m["lgoha"] - m["ngoha"]
      }' "$RESULTS"
  done
fi
echo
echo "Every run (lost = offered - delivered; relay losses include udp-rcvbuf-errors, the kernel's drops):"
echo
echo '```'
echo "mode proto impl round events events/s cpu-us/event offered lost udp-rcvbuf-errors bad disorder ring-drops bytes"
cat "$RESULTS"
echo '```'
