#!/usr/bin/env bash
# Idle-connection pool benchmark: HAProxy's pool-low-conn experiment (many
# client connections, several threads, many servers answering in 1 ms)
# scaled to a small machine, on loopback only.
#
# For every number of servers and every pool-low-conn value, round after
# round (A B C D D C B A ...), it starts goha with nbthread $NBTHREAD,
# http-reuse always and round-robin over the servers, loads it with wrk,
# and reads the stats socket before and after the measured run:
#   req/s       wrk's Requests/sec
#   reuse %     show stat reuse / (reuse + connect) of the backend, deltas
#   takeover/s  show activity fd_takeover total, delta / duration
#   per 1k req  the same delta per thousand requests wrk completed (the
#               rate depends on the request rate, which noise moves a lot)
#   spread      largest per-thread fd_takeover delta / smallest
#   CPU µs/req  goha's user+system CPU time over the run / requests (less
#               noisy than req/s when other work shares the machine)
# and prints a Markdown table of the medians over the rounds, then every run.
#
# Every process it starts (backend, goha) is stopped by its PID; nothing is
# killed by name. A run lasts WARMUP + DURATION plus about a second.
#
# Usage: scripts/bench-pool.sh            (knobs are environment variables)
#   SERVERS="50 200"  server counts        LOWCONN="0 8"  pool-low-conn values
#   CONNS=1000        wrk connections      THREADS=1      wrk threads
#   DURATION=5        measured seconds     WARMUP=2       warm-up seconds
#   ROUNDS=2          interleaved rounds   NBTHREAD=4     goha threads
#   DELAY=1ms         server service time  PURGE=         pool-purge-delay (default 5s)
#   BACKEND_SRC=/work/shared/bench/backend (the shared bench backend's source)
#   GOHA=             a goha binary to use instead of building ./cmd/goha
#   SRC=head          build the committed HEAD (git archive, so that edits in
#                     progress in the work tree do not leak in); SRC=tree
#                     builds the work tree as it is
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVERS=${SERVERS:-"50 200"}
LOWCONN=${LOWCONN:-"0 8"}
CONNS=${CONNS:-1000}
THREADS=${THREADS:-1}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-2}
NBTHREAD=${NBTHREAD:-4}
DELAY=${DELAY:-1ms}
PURGE=${PURGE:-}
BACKEND_SRC=${BACKEND_SRC:-/work/shared/bench/backend}
GOHA=${GOHA:-}
SRC=${SRC:-head}
INVOCATION="$(for v in SERVERS LOWCONN CONNS THREADS DURATION WARMUP ROUNDS NBTHREAD DELAY PURGE; do
  if [[ -n ${!v} ]]; then
    if [[ ${!v} == *" "* ]]; then printf '%s="%s" ' "$v" "${!v}"; else printf '%s=%s ' "$v" "${!v}"; fi
  fi
done)scripts/bench-pool.sh"

. "$ROOT/scripts/lib.sh"
BENCH_NAME=bench-pool
for tool in wrk socat go ss; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
bench_init bench-pool

echo "building..." >&2
if [[ -z $GOHA ]]; then
  if [[ $SRC == head ]]; then
    mkdir "$WORK/src"
    git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
    echo "goha at $(git -C "$ROOT" rev-parse --short HEAD)" >&2
    (cd "$WORK/src" && go build -o "$WORK/goha" ./cmd/goha)
  else
    (cd "$ROOT" && go build -o "$WORK/goha" ./cmd/goha)
  fi
  GOHA=$WORK/goha
fi
(cd "$BACKEND_SRC" && go build -o "$WORK/backend" .)
cd "$WORK"

MAXSRV=0
for n in $SERVERS; do ((n > MAXSRV)) && MAXSRV=$n; done
BASE=$(free_range $((MAXSRV + 1)))
LB_PORT=$((BASE + MAXSRV))
"$WORK/backend" -base "$BASE" -n "$MAXSRV" -delay "$DELAY" >"$WORK/backend.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$WORK/backend.log" && break; sleep 0.1; done
grep -q ready "$WORK/backend.log" || die "backend did not start: $(cat "$WORK/backend.log")"

gen_cfg() { # servers lowconn
  echo "global"
  echo "    nbthread $NBTHREAD"
  echo "    maxconn 8000"
  echo "    stats socket $WORK/admin.sock level admin"
  echo "defaults"
  echo "    mode http"
  echo "    http-reuse always"
  echo "    timeout connect 5s"
  echo "    timeout client 30s"
  echo "    timeout server 30s"
  echo "frontend fe"
  echo "    bind 127.0.0.1:$LB_PORT"
  echo "    default_backend be"
  echo "backend be"
  echo "    balance roundrobin"
  echo "    default-server pool-low-conn $2${PURGE:+ pool-purge-delay $PURGE}"
  local i
  for ((i = 0; i < $1; i++)); do echo "    server s$i 127.0.0.1:$((BASE + i))"; done
}

cli() { socat -t 5 stdio "unix-connect:$WORK/admin.sock" <<<"$1"; }

# snapshot: "total t0 t1 ... reuse connect"
snapshot() {
  local act stat
  act=$(cli "show activity" | sed -n 's/^fd_takeover: \([0-9]*\) \[ \(.*\) \]$/\1 \2/p')
  stat=$(cli "show stat" | awk -F, '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == "be" && $2 == "BACKEND" { print $col["reuse"] + 0, $col["connect"] + 0 }')
  [[ -n $act && -n $stat ]] || die "stats socket gave no fd_takeover or backend row"
  echo "$act $stat"
}

# run servers lowconn: prints
# "rps reuse% takeovers/s takeovers/1k-req spread cpu-us/req errors per-thread"
run() {
  local cfg=$WORK/goha.cfg pid before after out rps errs c0 c1 reqs
  gen_cfg "$1" "$2" >"$cfg"
  rm -f "$WORK/admin.sock"
  "$GOHA" -db -f "$cfg" >"$WORK/goha.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 100); do [[ -S $WORK/admin.sock ]] && break; sleep 0.05; done
  [[ -S $WORK/admin.sock ]] || die "goha did not start: $(cat "$WORK/goha.log")"
  wrk -c "$CONNS" -t "$THREADS" -d "${WARMUP}s" --timeout 5s "http://127.0.0.1:$LB_PORT/" >/dev/null
  before=$(snapshot)
  c0=$(cputicks "$pid")
  out=$(wrk -c "$CONNS" -t "$THREADS" -d "${DURATION}s" --timeout 5s "http://127.0.0.1:$LB_PORT/")
  c1=$(cputicks "$pid")
  after=$(snapshot)
  stop_pid "$pid"
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  reqs=$(awk '/ requests in / {print $1}' <<<"$out")
  errs=$(awk '/Socket errors:|Non-2xx/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) s += $i} END {print s + 0}' <<<"$out")
  awk -v rps="$rps" -v d="$DURATION" -v errs="$errs" -v n="$NBTHREAD" -v reqs="$reqs" \
    -v cpu="$(awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v r="$reqs" 'BEGIN {printf "%.1f", (r > 0 ? 1e6 * c / hz / r : 0)}')" '
    NR == 1 { for (i = 1; i <= NF; i++) b[i] = $i }
    NR == 2 {
      for (i = 1; i <= NF; i++) x[i] = $i - b[i]
      lo = -1; hi = 0; per = ""
      for (t = 2; t <= n + 1; t++) {
        if (lo < 0 || x[t] < lo) lo = x[t]
        if (x[t] > hi) hi = x[t]
        per = per (t > 2 ? " " : "") x[t]
      }
      reuse = x[n + 2]; conn = x[n + 3]
      rate = reuse + conn > 0 ? 100 * reuse / (reuse + conn) : 0
      spread = lo > 0 ? sprintf("%.2f", hi / lo) : "-"
      printf "%s %.2f %.0f %.1f %s %s %d %s\n", rps, rate, x[1] / d, (reqs > 0 ? 1000 * x[1] / reqs : 0), spread, cpu, errs, per
    }' <<<"$before"$'\n'"$after"
}

# Even rounds run the configurations in reverse order, so that whatever
# drifts during a round (other load, sockets in TIME_WAIT) does not always
# fall on the same configuration.
CONFIGS=()
for n in $SERVERS; do
  for lc in $LOWCONN; do CONFIGS+=("$n/$lc"); done
done
declare -A RES
for ((r = 1; r <= ROUNDS; r++)); do
  order=("${CONFIGS[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#CONFIGS[@]} - 1; i >= 0; i--)); do order+=("${CONFIGS[i]}"); done
  fi
  for c in "${order[@]}"; do
    n=${c%/*} lc=${c#*/}
    line=$(run "$n" "$lc")
    RES[$n/$lc/$r]=$line
    echo "round $r servers $n pool-low-conn $lc: $line" >&2
  done
done

echo
echo "\`$INVOCATION\` (nbthread $NBTHREAD, wrk -c $CONNS -t $THREADS, ${WARMUP} s warm-up + ${DURATION} s, servers answer in $DELAY; median of $ROUNDS rounds)"
echo
echo "| servers | pool-low-conn | req/s | reuse % | takeovers/s | takeovers per 1k req | spread | CPU µs/req |"
echo "|---|---|---|---|---|---|---|---|"
for n in $SERVERS; do
  for lc in $LOWCONN; do
    cols=()
    for f in 1 2 3 4 5 6; do
      cols+=("$(for ((r = 1; r <= ROUNDS; r++)); do awk -v f=$f '{print $f}' <<<"${RES[$n/$lc/$r]}"; done | grep -v '^-$' | median)")
    done
    printf '| %s | %s | %.0f | %.2f | %.0f | %.1f | %s | %.1f |\n' "$n" "$lc" "${cols[0]}" "${cols[1]}" "${cols[2]}" "${cols[3]}" "${cols[4]:--}" "${cols[5]}"
  done
done
echo
echo "Every run (wrk errors: socket errors and non-2xx responses; per thread: fd_takeover deltas):"
echo
echo "| servers | pool-low-conn | round | req/s | reuse % | takeovers/s | per 1k req | spread | CPU µs/req | errors | per thread |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $SERVERS; do
  for lc in $LOWCONN; do
    for ((r = 1; r <= ROUNDS; r++)); do
      read -r rps rate tps tpk spread cpu errs per <<<"${RES[$n/$lc/$r]}"
      echo "| $n | $lc | $r | $rps | $rate | $tps | $tpk | $spread | $cpu | $errs | $per |"
    done
  done
done
