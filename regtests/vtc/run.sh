#!/usr/bin/env bash
# Runs the VTC reg-tests under regtests/vtc with varnishtest, first against a
# freshly built goha, then (when it is installed) against HAProxy.
#
# Usage: regtests/vtc/run.sh [-v] [-j N] [--goha-only|--haproxy-only] [file.vtc|dir ...]
#
# Markers, comment lines at the top of a script:
#   #GOHA_ONLY=<reason>        not run against HAProxy
#   #GOHA_REQUIRES=<feature>   not run against goha until the feature exists
#
# Environment: HAPROXY (default /usr/sbin/haproxy), VARNISHTEST (default
# varnishtest), VTC_TIMEOUT (seconds per script, default 20), GOHA (use this
# goha binary instead of building one).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
jobs=2
verbose=0
targets="goha haproxy"
files=()

while [ $# -gt 0 ]; do
	case "$1" in
	-v) verbose=1 ;;
	-j) jobs=$2; shift ;;
	--goha-only) targets="goha" ;;
	--haproxy-only) targets="haproxy" ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) files+=("$1") ;;
	esac
	shift
done

HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
VARNISHTEST=${VARNISHTEST:-varnishtest}
VTC_TIMEOUT=${VTC_TIMEOUT:-20}

if ! command -v "$VARNISHTEST" >/dev/null 2>&1; then
	echo "run.sh: $VARNISHTEST not found (apt-get install varnish)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/goha-vtc.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/res"

if [ -z "${GOHA:-}" ]; then
	echo "=== building goha"
	if ! (cd "$root" && go build -o "$work/goha" ./cmd/goha); then
		echo "run.sh: go build failed" >&2
		exit 2
	fi
	GOHA=$work/goha
fi
# varnishtest starts the program from each test's own directory.
case $GOHA in /*) ;; *) GOHA=$(cd "$(dirname "$GOHA")" && pwd)/$(basename "$GOHA") ;; esac

# Collect the scripts, sorted, relative to regtests/vtc.
if [ ${#files[@]} -eq 0 ]; then
	files=("$here")
fi
list=$(for f in "${files[@]}"; do
	if [ -d "$f" ]; then find "$f" -name '*.vtc'; else echo "$f"; fi
done | while read -r f; do
	(cd "$(dirname "$f")" && echo "$(pwd)/$(basename "$f")")
done | sort -u)

# marker FILE NAME prints the value of #NAME=... in the script's leading
# comment block.
marker() {
	awk -v key="#$2=" '
		/^#/ { if (index($0, key) == 1) { print substr($0, length(key) + 1); exit } next }
		/^[[:space:]]*$/ { next }
		{ exit }' "$1"
}

rel() { echo "${1#"$here"/}"; }

# runone TARGET PROGRAM FILE: one varnishtest run; the result goes to
# $work/res as "STATUS seconds" and the log next to it.
runone() {
	local target=$1 prog=$2 f=$3 id start end rc
	id=$(rel "$f" | tr '/' '_')
	start=$(date +%s.%N)
	TMPDIR=$work/tmp HAPROXY_PROGRAM=$prog \
		"$VARNISHTEST" -t "$VTC_TIMEOUT" -v "$f" >"$work/res/$target.$id.log" 2>&1
	rc=$?
	end=$(date +%s.%N)
	awk -v rc="$rc" -v s="$start" -v e="$end" 'BEGIN { printf "%s %.1f\n", rc, e - s }' >"$work/res/$target.$id.rc"
}
export -f runone rel
export work here VARNISHTEST VTC_TIMEOUT

passed=0 failed=0 skipped=0
failures=()
t0=$(date +%s)

for target in $targets; do
	case $target in
	goha) prog=$GOHA ;;
	haproxy)
		if [ ! -x "$HAPROXY" ]; then
			echo "=== $HAPROXY not installed: HAProxy pass skipped"
			continue
		fi
		prog=$HAPROXY ;;
	esac
	echo "=== $target: $("$prog" -v 2>/dev/null | head -1)"
	torun=()
	for f in $list; do
		if [ "$target" = goha ]; then
			why=$(marker "$f" GOHA_REQUIRES)
			if [ -n "$why" ]; then
				echo "SKIP  $target $(rel "$f") (requires $why)"
				skipped=$((skipped + 1))
				continue
			fi
		else
			why=$(marker "$f" GOHA_ONLY)
			if [ -n "$why" ]; then
				echo "SKIP  $target $(rel "$f") (goha only: $why)"
				skipped=$((skipped + 1))
				continue
			fi
		fi
		torun+=("$f")
	done
	[ ${#torun[@]} -eq 0 ] && continue
	printf '%s\n' "${torun[@]}" |
		xargs -P "$jobs" -I{} bash -c 'runone "$0" "$1" "$2"' "$target" "$prog" {}
	for f in "${torun[@]}"; do
		id=$(rel "$f" | tr '/' '_')
		read -r rc secs <"$work/res/$target.$id.rc"
		if [ "$rc" = 0 ]; then
			echo "PASS  $target $(rel "$f") (${secs}s)"
			passed=$((passed + 1))
			[ $verbose = 1 ] && sed 's/^/      /' "$work/res/$target.$id.log"
		else
			echo "FAIL  $target $(rel "$f") (${secs}s, exit $rc)"
			failed=$((failed + 1))
			failures+=("$target $(rel "$f")")
			# What led to the first "----" line is the interesting part.
			awk '/^----/ { print; exit } /^(\*+|#) / { print }' "$work/res/$target.$id.log" |
				tail -20 | sed 's/^/      /'
		fi
	done
done

echo "=== done in $(($(date +%s) - t0))s"
for f in "${failures[@]+"${failures[@]}"}"; do
	echo "FAILED: $f"
done
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
