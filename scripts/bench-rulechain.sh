#!/usr/bin/env bash
# Runs a proxy on the load harness's config with a ten-rule chain added to
# its frontend: the chain of core/stream's BenchmarkRuleChain (ACLs on path
# and host, a map lookup into a variable, a condition on it, header
# rewrites with expressions), adapted to the harness's Host header.
#
#   scripts/bench-rulechain.sh <binary> [args...]   e.g. as EXTRA_CMD with {cfg}
#   scripts/bench-rulechain.sh [args...]            as HAPROXY_BIN: runs
#                                                   ${RULECHAIN_HAPROXY:-/usr/sbin/haproxy}
#
# RULECHAIN=stick replaces the chain by per-client rate limiting: every
# request is tracked in a stick table by source address and checked against
# its request rate (a limit it never reaches, so that all are answered).
#
# Both proxies then read the same config, chain included:
#   HAPROXY_BIN=$PWD/scripts/bench-rulechain.sh EXTRA_NAME=goha \
#   EXTRA_CMD="$PWD/scripts/bench-rulechain.sh $PWD/bin/goha -db -f {cfg}" \
#   ../shared/bench/run.sh -p haproxy
set -euo pipefail

if [[ $# -gt 0 && $1 != -* ]]; then
  bin=$1
  shift
else
  bin=${RULECHAIN_HAPROXY:-/usr/sbin/haproxy}
fi

args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == -f && $((i + 1)) -lt ${#args[@]} ]] || continue
  cfg=${args[i + 1]}
  out=$cfg.rulechain
  map=$cfg.routes.map
  printf '127.0.0.1 be_bench\nlocalhost be_bench\n' > "$map"
  awk -v map="$map" -v chain="${RULECHAIN:-rules}" '
    { print }
    /^[ \t]*default_backend be_bench/ && chain == "stick" {
      print "    http-request track-sc0 src table st_src"
      print "    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100000000 }"
      next
    }
    END {
      if (chain == "stick") {
        print "backend st_src"
        print "    stick-table type ip size 100k expire 60s store http_req_rate(10s)"
      }
    }
    /^[ \t]*default_backend be_bench/ {
      print "    acl is_api path_beg /api"
      print "    acl host_ok hdr(host),field(1,:) -i 127.0.0.1 localhost"
      print "    acl is_static path_end .css .js .png"
      print "    http-request deny if !host_ok"
      print "    http-request set-var(txn.route) hdr(host),field(1,:),lower,map_str(" map ",none)"
      print "    http-request return status 404 if { var(txn.route) -m str none }"
      print "    http-request set-header x-route %[var(txn.route)]"
      print "    http-request set-header x-client %[src],%[path]"
      print "    http-request add-header x-api 1 if is_api"
      print "    http-request del-header x-debug if !is_api"
      print "    http-request set-var(txn.static) bool(1) if is_static"
      print "    http-response set-header x-static yes if { var(txn.static) -m bool }"
      print "    use_backend be_bench if host_ok"
    }' "$cfg" > "$out"
  grep -Eq 'acl is_api|track-sc0 src' "$out" || { echo "bench-rulechain: no 'default_backend be_bench' in $cfg" >&2; exit 1; }
  args[i + 1]=$out
done
exec "$bin" "${args[@]}"
