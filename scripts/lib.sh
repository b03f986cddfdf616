# Shared helpers of the benchmark scripts (sourced, not run).
#
# bench_init NAME   sets up $WORK (a temporary directory removed on exit),
#                   the PIDS list of processes to stop on exit, and die()'s
#                   prefix. Every process a script starts goes into PIDS
#                   and is stopped by its PID; nothing is killed by name.

bench_init() {
  BENCH_NAME=$1
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/$BENCH_NAME.XXXXXX")
  PIDS=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

die() { echo "${BENCH_NAME:-bench}: $*" >&2; exit 1; }

bench_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}

# stop_pid PID: stop one process this script started.
stop_pid() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local p keep=()
  for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
  PIDS=("${keep[@]}")
}

# free_range N [FIRST]: a first port below 32768 such that N consecutive
# ports are free for both TCP and UDP, searching from FIRST in steps of 500.
free_range() {
  local n=$1 first=${2:-20000} base used
  used=$(ss -Htuan 2>/dev/null | awk '{n=split($5,a,":"); print a[n]}' | sort -un)
  for base in $(seq "$first" 500 31600); do
    if ! awk -v lo="$base" -v hi=$((base + n)) '$1>=lo && $1<=hi {found=1} END {exit !found}' <<<"$used"; then
      echo "$base"
      return
    fi
  done
  die "no free port range of $n"
}

# cputicks PID: user+system clock ticks the process used so far.
cputicks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# start_proxy goha|haproxy CFG PORT: starts $GOHA or $HAPROXY on CFG (output
# in $WORK/proxy.log), records its PID for cleanup in PROXY_PID and PIDS,
# and waits until PORT listens.
start_proxy() {
  case $1 in
    goha) "$GOHA" -db -f "$2" >"$WORK/proxy.log" 2>&1 & ;;
    haproxy) "$HAPROXY" -db -f "$2" >"$WORK/proxy.log" 2>&1 & ;;
    *) die "unknown proxy $1" ;;
  esac
  PROXY_PID=$!
  PIDS+=("$PROXY_PID")
  local i
  for i in $(seq 100); do
    ss -Htln "sport = :$3" | grep -q . && return 0
    sleep 0.05
  done
}
