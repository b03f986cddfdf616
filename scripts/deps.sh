#!/usr/bin/env bash
# Installs the Debian packages the tests talk to, when they are missing:
# real HAProxy 2.6 for differential tests, socat, rsyslog, varnishtest,
# redis for health checks, tmux for the admin shell's terminal tests, hatop
# and the Prometheus exporter as real clients of the stats socket.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "$2" ]; }
have haproxy /usr/sbin/haproxy || need+=(haproxy)
have socat /usr/bin/socat || need+=(socat)
have rsyslogd /usr/sbin/rsyslogd || need+=(rsyslog)
have varnishtest /usr/bin/varnishtest || need+=(varnish)
have redis-server /usr/bin/redis-server || need+=(redis-server)
have tmux /usr/bin/tmux || need+=(tmux)
have hatop /usr/bin/hatop || need+=(hatop)
have prometheus-haproxy-exporter /usr/bin/prometheus-haproxy-exporter || need+=(prometheus-haproxy-exporter)
have wrk /usr/bin/wrk || need+=(wrk)
have curl /usr/bin/curl || need+=(curl)
have ss /usr/bin/ss || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/deps.sh: missing ${need[*]} and not root; tests that need them will skip" >&2
    exit 0
  fi
  echo "scripts/deps.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
