#!/usr/bin/env bash
# Runs HAProxy 2.6.0's own reg-tests (kept beside the project, in
# ../shared/haproxy-regtests-2.6.0) against goha with varnishtest, reading
# each test's header lines the way HAProxy's scripts/run-regtests.sh does:
# #REQUIRE_OPTIONS, #REQUIRE_VERSION, #REQUIRE_VERSION_BELOW,
# #REQUIRE_SERVICE(S), #EXCLUDE_TARGET(S), against `goha -vv`.
#
# Usage: scripts/haproxy-regtests.sh [--list FILE] [--update FILE] [-j N] [-v] [test.vtc ...]
#   --list FILE    run the tests named in FILE (default: every test HAProxy
#                  2.6.12 passes here, passing-on-haproxy-2.6.12.txt)
#   --update FILE  add the tests that passed to FILE (a list only grows)
#   -v             print the varnishtest log of each failure
#
# Environment: GOHA (binary to run; built when unset), HAPROXY_REGTESTS (the
# suite's directory), VARNISHTEST, VTC_TIMEOUT (seconds per test, default 20).
# The last line is `N passed, N failed, N skipped`; the exit status is
# non-zero when a test fails.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
suite=${HAPROXY_REGTESTS:-}
if [ -z "$suite" ]; then
	for d in "$root/../shared/haproxy-regtests-2.6.0" /work/shared/haproxy-regtests-2.6.0; do
		[ -d "$d/reg-tests" ] && { suite=$d; break; }
	done
fi
list=""
update=""
jobs=2
verbose=0
files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--list) list=$2; shift ;;
	--update) update=$2; shift ;;
	-j) jobs=$2; shift ;;
	-v) verbose=1 ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	*) files+=("$1") ;;
	esac
	shift
done

VARNISHTEST=${VARNISHTEST:-varnishtest}
VTC_TIMEOUT=${VTC_TIMEOUT:-20}
if ! command -v "$VARNISHTEST" >/dev/null 2>&1; then
	echo "haproxy-regtests: $VARNISHTEST not found (apt-get install varnish)" >&2
	exit 2
fi
if [ ! -d "$suite/reg-tests" ]; then
	# The suite is HAProxy's (GPL-2.0) and lives beside the project, not in it.
	echo "haproxy-regtests: HAProxy's reg-test suite not found (set HAPROXY_REGTESTS); NOT RUN" >&2
	[ "${HAPROXY_REGTESTS_REQUIRED:-0}" = 1 ] && exit 2
	exit 0
fi
[ -n "$list" ] || list=$suite/passing-on-haproxy-2.6.12.txt
if [ ${#files[@]} -eq 0 ]; then
	mapfile -t files < <(grep -v '^[[:space:]]*\(#\|$\)' "$list")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/goha-hrt.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/res"
if [ -z "${GOHA:-}" ]; then
	(cd "$root" && go build -o "$work/goha" ./cmd/goha) || exit 2
	GOHA=$work/goha
fi
case $GOHA in /*) ;; *) GOHA=$(cd "$(dirname "$GOHA")" && pwd)/$(basename "$GOHA") ;; esac

# The suite's symbolic links (common.pem in several directories, pointing to
# ../ssl/common.pem) may come as plain files holding the link's target, as
# git leaves them where it does not make links: the tests then read a
# 17-byte path as a certificate, and HAProxy fails them as goha does. Such a
# suite runs from a temporary copy with its links made again.
links=$(find "$suite/reg-tests" -type f -size -200c -name '*.pem' 2>/dev/null | while read -r f; do
	t=$(head -c 200 "$f")
	case $t in ../*|./*) [ -f "$(dirname "$f")/$t" ] && echo "${f#"$suite"/}" ;; esac
done)
if [ -n "$links" ]; then
	mkdir -p "$work/suite"
	cp -r "$suite/reg-tests" "$work/suite/"
	for f in $links; do
		t=$(head -c 200 "$suite/$f")
		rm -f "$work/suite/$f" && ln -s "$t" "$work/suite/$f"
	done
	suite=$work/suite
fi

# What the program says it has, read as run-regtests.sh reads it.
vv=$("$GOHA" -dM -vv 2>&1)
version=$(echo "$vv" | sed -n 's/^HA-\{0,1\}Proxy version \([0-9]*\.[0-9]*\).*/\1/p' | head -1)
target=$(echo "$vv" | sed -n 's/^ *TARGET *= *\([^ ]*\).*/\1/p' | head -1)
features=" $(echo "$vv" | sed -n 's/^Feature list : //p') "
services=" $(echo "$vv" | sed -n 's/^Available services : //p' | tr -d ',') "

# header KEY prints the value of `#KEY=` among the current test's header
# lines ($hdrs, read once per test: a sed per key was slow on a busy machine).
header() {
	local l
	while IFS= read -r l; do
		case $l in "#$1="*) echo "${l#*=}"; return ;; esac
	done <<<"$hdrs"
}

# vercmp A B: true when version A >= version B (major.minor).
verge() {
	local a1=${1%%.*} a2=${1#*.} b1=${2%%.*} b2=${2#*.}
	[ "$a1" -gt "$b1" ] || { [ "$a1" -eq "$b1" ] && [ "${a2%%.*}" -ge "${b2%%.*}" ]; }
}

# skipwhy FILE prints why the test does not apply to the program, if it does not.
skipwhy() {
	local f=$1 v o s t hdrs
	hdrs=$(grep '^#[A-Z_]*=' "$f" | tr -d '\r')
	v=$(header REQUIRE_VERSION)
	if [ -n "$v" ] && ! verge "$version" "$v"; then echo "version $version < $v"; return; fi
	v=$(header REQUIRE_VERSION_BELOW)
	if [ -n "$v" ] && verge "$version" "$v"; then echo "version $version >= $v"; return; fi
	# An option written A|B is met by either.
	for o in $(header REQUIRE_OPTIONS | tr ',' ' '); do
		local alt ok=0
		for alt in ${o//|/ }; do
			case $features in *" +$alt "*) ok=1 ;; esac
		done
		[ $ok = 1 ] || { echo "option $o missing"; return; }
	done
	for s in $( (header REQUIRE_SERVICE; header REQUIRE_SERVICES) | tr ',' ' '); do
		case $services in *" $s "*) ;; *) echo "service $s missing"; return ;; esac
	done
	for t in $( (header EXCLUDE_TARGET; header EXCLUDE_TARGETS) | tr ',' ' '); do
		[ "$t" = "$target" ] && { echo "target $t excluded"; return; }
	done
}

runone() {
	local id
	id=$(echo "$1" | tr '/' '_')
	# varnishtest stops the program with SIGINT; a shell that started this
	# script in the background left SIGINT ignored, which HAProxy and goha
	# would inherit.
	# A short directory per test: UNIX socket paths under it must fit in
	# 108 bytes.
	local tmp
	tmp=$(mktemp -d "$work/tmp/XXXXXX")
	(cd "$suite" && TMPDIR=$tmp HAPROXY_PROGRAM=$GOHA HAPROXY_ARGS=-dM \
		env --default-signal=INT "$VARNISHTEST" -k -t "$VTC_TIMEOUT" -v "$1" >"$work/res/$id.log" 2>&1)
	echo $? >"$work/res/$id.rc"
	# varnishtest leaves a program running when stopping an earlier one
	# failed; its configuration is under this test's own directory.
	pkill -KILL -f -- "-f $tmp/" 2>/dev/null || true
}
export -f runone
export suite work GOHA VARNISHTEST VTC_TIMEOUT

torun=()
skipped=0
for f in "${files[@]}"; do
	why=$(skipwhy "$suite/$f")
	if [ -n "$why" ]; then
		echo "SKIP  $f ($why)"
		skipped=$((skipped + 1))
	else
		torun+=("$f")
	fi
done
t0=$(date +%s)
if [ ${#torun[@]} -gt 0 ]; then
	printf '%s\n' "${torun[@]}" | xargs -P "$jobs" -I{} bash -c 'runone "$0"' {}
fi

passed=0 failed=0
passing=()
for f in "${torun[@]+"${torun[@]}"}"; do
	id=$(echo "$f" | tr '/' '_')
	rc=$(cat "$work/res/$id.rc")
	# A `feature cmd` that fails makes varnishtest skip the test and exit 0.
	if grep -q '^#[[:space:]]*top[[:space:]]*TEST .* skipped' "$work/res/$id.log"; then
		echo "SKIP  $f (the test skipped itself)"
		skipped=$((skipped + 1))
	elif [ "$rc" = 0 ]; then
		echo "PASS  $f"
		passed=$((passed + 1))
		passing+=("$f")
	else
		echo "FAIL  $f"
		failed=$((failed + 1))
		if [ $verbose = 1 ]; then
			sed 's/^/      /' "$work/res/$id.log"
		else
			awk '/^----/ { print; exit } /^(\*+|#) / { print }' "$work/res/$id.log" | tail -8 | sed 's/^/      /'
		fi
	fi
done

if [ -n "$update" ] && [ ${#passing[@]} -gt 0 ]; then
	{ grep -v '^[[:space:]]*$' "$update" 2>/dev/null; printf '%s\n' "${passing[@]}"; } | sort -u >"$work/list"
	cp "$work/list" "$update"
fi
echo "=== $(basename "$list"): done in $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
