#!/usr/bin/env bash
# TLS benchmark, goha against HAProxy 2.6 on the same configurations:
#  1. handshakes per second on a `bind ... ssl crt` (wrk with
#     "Connection: close", so every request is a new TLS session);
#  2. keep-alive req/s through the proxy to a TLS server (`server ... ssl`),
#     the origin being one HAProxy answering with `http-request return`;
#  3. with KEYS (default "ec rsa": ECDSA P-256 and RSA 2048 certificates),
#     TLS 1.3 full handshakes (`openssl s_time -new`), resumed handshakes
#     (`openssl s_time -reuse`) and keep-alive HTTPS req/s (wrk) on the bind.
# Each row gives the proxy's CPU time over the run, so that the rate per
# core does not depend on how many cores the client took.
# Loopback only; every process is started here and stopped by PID.
# Usage: scripts/bench-tls.sh [rounds]   (GOHA=path to a built goha)
set -euo pipefail
ROUNDS=${1:-2}
DUR=${DUR:-5s}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
GOHA=${GOHA:-$work/goha}
[ -x "$GOHA" ] || (cd "$root" && go build -o "$GOHA" ./cmd/goha)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/k.pem" \
  -out "$work/c.pem" -days 1 -subj /CN=bench.test >/dev/null 2>&1
cat "$work/c.pem" "$work/k.pem" > "$work/crt.pem"

P1=$(free_port); P2=$(free_port); PO=$(free_port)
cat > "$work/bind.cfg" <<CFG
global
    nbthread 2
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$P1 ssl crt $work/crt.pem
    http-request return status 200 content-type text/plain string ok
CFG
cat > "$work/origin.cfg" <<CFG
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend origin
    bind 127.0.0.1:$PO ssl crt $work/crt.pem
    http-request return status 200 content-type text/plain string "hello, world"
CFG
cat > "$work/srv.cfg" <<CFG
global
    nbthread 2
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    http-reuse always
frontend fe
    bind 127.0.0.1:$P2
    default_backend be
backend be
    server origin 127.0.0.1:$PO ssl verify none
CFG

# run <prog> <cfg> <url> <extra wrk args...>: prints "rps cores"
run() {
  local prog=$1 cfg=$2 url=$3; shift 3
  "$prog" -db -f "$cfg" >/dev/null 2>&1 & local pid=$!
  sleep 0.7
  wrk -t1 -c50 -d1s "$@" "$url" >/dev/null 2>&1 || true
  local t0 t1 rps
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  rps=$(wrk -t1 -c50 -d"$DUR" "$@" "$url" 2>/dev/null | awk '/Requests\/sec/{print $2}')
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  local secs=${DUR%s}
  awk -v r="$rps" -v t="$((t1-t0))" -v s="$secs" -v tck="$(getconf CLK_TCK)" \
    'BEGIN{c=t/tck/s; printf "%s %.2f %.0f\n", r, c, (c>0? r/c : 0)}'
}

# stime <prog> <cfg> <port> <-new|-reuse>: TLS 1.3 handshakes with openssl
# s_time; prints "rate cores rate-per-core".
stime() {
  local prog=$1 cfg=$2 port=$3 mode=$4
  "$prog" -db -f "$cfg" >/dev/null 2>&1 & local pid=$!
  sleep 0.7
  openssl s_time -connect 127.0.0.1:$port -tls1_3 $mode -www / -time 1 >/dev/null 2>&1 || true
  local t0 t1 w0 w1 n
  t0=$(awk '{print $14+$15}' /proc/$pid/stat); w0=$(date +%s.%N)
  # -www makes each connection a GET, so that the client reads the TLS 1.3
  # session tickets -reuse resumes with.
  n=$(openssl s_time -connect 127.0.0.1:$port -tls1_3 $mode -www / -time "${DUR%s}" 2>/dev/null |
    awk '/connections in [0-9]+ real seconds/{print $1; exit}')
  t1=$(awk '{print $14+$15}' /proc/$pid/stat); w1=$(date +%s.%N)
  kill $pid; wait $pid 2>/dev/null || true
  awk -v n="${n:-0}" -v t="$((t1-t0))" -v w0="$w0" -v w1="$w1" -v tck="$(getconf CLK_TCK)" \
    'BEGIN{s=w1-w0; c=t/tck/s; printf "%.0f %.2f %.0f\n", n/s, c, (c>0? n/s/c : 0)}'
}

if [ -n "${KEYS-ec rsa}" ]; then
  echo "| key | test | proxy | round | rate/s | proxy cores | rate per core |"
  echo "|---|---|---|---:|---:|---:|---:|"
  for key in ${KEYS-ec rsa}; do
    case $key in
    ec) openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/k-$key.pem" \
          -out "$work/c-$key.pem" -days 1 -subj /CN=bench.test >/dev/null 2>&1 ;;
    rsa) openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/k-$key.pem" \
          -out "$work/c-$key.pem" -days 1 -subj /CN=bench.test >/dev/null 2>&1 ;;
    esac
    cat "$work/c-$key.pem" "$work/k-$key.pem" > "$work/crt-$key.pem"
    sed "s#crt $work/crt.pem#crt $work/crt-$key.pem#" "$work/bind.cfg" > "$work/bind-$key.cfg"
    for r in $(seq "$ROUNDS"); do
      for name in goha haproxy; do
        prog=$GOHA; [ $name = haproxy ] && prog=$HAPROXY
        read -r n cores pc < <(stime "$prog" "$work/bind-$key.cfg" "$P1" -new)
        echo "| $key | TLS 1.3 full handshakes | $name | $r | $n | $cores | $pc |"
        read -r n cores pc < <(stime "$prog" "$work/bind-$key.cfg" "$P1" -reuse)
        echo "| $key | TLS 1.3 resumed handshakes | $name | $r | $n | $cores | $pc |"
        read -r n cores pc < <(run "$prog" "$work/bind-$key.cfg" "https://127.0.0.1:$P1/")
        echo "| $key | keep-alive HTTPS req/s | $name | $r | $n | $cores | $pc |"
      done
    done
  done
  [ "${ONLY_KEYS:-}" = 1 ] && exit 0
fi

"$HAPROXY" -db -f "$work/origin.cfg" >/dev/null 2>&1 & opid=$!
sleep 0.5
echo "| test | proxy | round | req/s | proxy cores | req/s per core |"
echo "|---|---|---:|---:|---:|---:|"
for r in $(seq "$ROUNDS"); do
  for name in goha haproxy; do
    prog=$GOHA; [ $name = haproxy ] && prog=$HAPROXY
    read -r rps cores pc < <(run "$prog" "$work/bind.cfg" "https://127.0.0.1:$P1/" -H "Connection: close")
    echo "| handshakes on a bind | $name | $r | $rps | $cores | $pc |"
    read -r rps cores pc < <(run "$prog" "$work/srv.cfg" "http://127.0.0.1:$P2/")
    echo "| keep-alive to a TLS server | $name | $r | $rps | $cores | $pc |"
  done
done
kill $opid
