#!/usr/bin/env bash
# bench/grep.sh: time grep's engine (internal/search, walked as the tool
# walks) and codetools' glob against ripgrep and fd on the Go source tree
# (warm cache), check that they find the same things, and print median
# wall and CPU times (user+sys), their ratios, peak memory and the load.
#
#   bash bench/grep.sh [TREE]      TREE defaults to $(go env GOROOT)/src
#   RUNS=5 bash bench/grep.sh      pairs of runs per case (default 5)
#   ONLY='err|ctx' bash ...        only the cases whose name matches (ERE)
#   GREPBENCH=/path/to/grepbench   time that build of bench/cmd/grepbench
#                                  (e.g. one of an older commit) instead
#   GLOBBENCH=/path/to/globbench   the same for bench/cmd/globbench
#
# Every case runs once on each side to check that the sets of matching lines
# (path:line) are equal, then RUNS alternating pairs (ours, rg, ours, rg...)
# with no output caps on either side (grep's engine is run by
# bench/cmd/grepbench, glob by bench/cmd/globbench, with no limit); the
# medians of the wall times and their ratio are printed, with our largest
# peak RSS (from wait4). ripgrep runs as
# `rg -n --hidden --no-require-git` (+ -i, -F as the case says): it honours
# .gitignore files outside git repositories and searches hidden files, as
# grep does; its standard input is /dev/null, else it would search that. Installs ripgrep, fd-find and hyperfine when missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$(go env GOROOT)/src}
runs=${RUNS:-5}
only=${ONLY:-}

need=()
command -v rg >/dev/null || need+=(ripgrep)
command -v fdfind >/dev/null || command -v fd >/dev/null || need+=(fd-find)
command -v hyperfine >/dev/null || need+=(hyperfine)
if ((${#need[@]})); then
	echo "installing ${need[*]}" >&2
	sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
fd=$(command -v fdfind || command -v fd)
fdflags=(--glob --hidden)
if "$fd" --help | grep -q -- --no-require-git; then
	fdflags+=(--no-require-git)
fi
rgflags=(-n --hidden)
if rg --help | grep -q -- --no-require-git; then
	rgflags+=(--no-require-git)
fi

work=$(mktemp -d)
trap 'echo "load average at the end $(cut -d" " -f1-3 /proc/loadavg)"; rm -rf "$work"' EXIT
bin=${GREPBENCH:-$work/grepbench}
[ -n "${GREPBENCH:-}" ] || (cd "$here/.." && go build -o "$bin" ./bench/cmd/grepbench)
globbin=${GLOBBENCH:-$work/globbench}
[ -n "${GLOBBENCH:-}" ] || (cd "$here/.." && go build -o "$globbin" ./bench/cmd/globbench)
cd "$tree"
echo "tree $tree, RUNS=$runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# pairs runs ours and theirs (each an argv) alternately $runs times after one
# warm-up each, and prints median wall ms of ours, of theirs, our peak RSS
# KiB, and median CPU ms (user+sys, from wait4) of ours and of theirs: the
# figure the machine's load changes least.
pairs() {
	python3 - "$runs" "$@" <<'PY'
import os, statistics, subprocess, sys, time
runs = int(sys.argv[1]); args = sys.argv[2:]; k = args.index("--")
ours, theirs = args[:k], args[k + 1:]
def run(argv):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_maxrss, ru.ru_utime + ru.ru_stime
run(ours); run(theirs)
o, t, oc, tc, rss = [], [], [], [], 0
for _ in range(runs):
    d, m, c = run(ours); o.append(d); oc.append(c); rss = max(rss, m)
    d, _, c = run(theirs); t.append(d); tc.append(c)
med = statistics.median
print(f"{med(o) * 1000:.0f} {med(t) * 1000:.0f} {rss} {med(oc) * 1000:.0f} {med(tc) * 1000:.0f}")
PY
}

# keys turns "path:N:text" or "path:N: text" lines into sorted "path:N".
keys() { sed -nE 's/^([^:]+):([0-9]+):.*/\1:\2/p' | LC_ALL=C sort; }

status=0
printf '| %-28s | %-18s | %9s | %8s | %8s | %7s | %8s | %8s | %9s | %8s |\n' pattern flags "matching" grep rg ratio "peak RSS" "grep CPU" "rg CPU" "CPU ratio"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------------------------ -------------------- ----------- ---------- ---------- --------- ---------- ---------- ----------- ----------
# name, tab, flags (-F literal, -i ignoreCase), tab, pattern; what each shows:
cases=$(cat <<'CASES'
literal	-F	NewReplacer(
ci literal	-F -i	unmarshal
ci regex	-i	func.*error
many matches	 	err
word boundary	 	\bctx\b
alternation in concat	 	(Unmarshal|Marshal)JSON
none	 	zzqqxxnotthere
unicode class	 	[α-ω]+
ci literal, upper	-F -i	NewReplacer
ci literal, non-ASCII	-F -i	é
ci many matches	-i	err
inner literal	 	\w+Error\(
ci inner literal	-i	\w+Error\(
anchored	 	^func
alternation of literals	 	Dial|Listen|Accept
ci alternation	-i	dial|listen|accept
unicode script	 	\p{Greek}
ci unicode class	-i	[α-ω]+
no usable literal	 	[0-9]{4}-[0-9]{2}-[0-9]{2}
ci none	-i	zzqqxxnotthere
CASES
)
while IFS=$'\t' read -r name flags pattern; do
	[ -n "$only" ] && ! [[ $name =~ $only ]] && continue
	read -ra fl <<<"$flags"
	"$bin" grep "${fl[@]}" "$pattern" </dev/null | keys >"$work/ours"
	rg "${rgflags[@]}" "${fl[@]}" -e "$pattern" </dev/null | keys >"$work/rg" || true
	same="$(wc -l <"$work/ours")"
	if ! cmp -s "$work/ours" "$work/rg"; then
		echo "$name '$pattern': MATCH SETS DIFFER (ours $(wc -l <"$work/ours"), rg $(wc -l <"$work/rg"))"
		diff "$work/ours" "$work/rg" | head -10
		status=1
		same="DIFFER"
	fi
	read -r mo mt rss co ct < <(pairs "$bin" grep "${fl[@]}" "$pattern" -- rg "${rgflags[@]}" "${fl[@]}" -e "$pattern")
	printf '| %-28s | %-18s | %9s | %5s ms | %5s ms | %6.2fx | %4d MiB | %5s ms | %6s ms | %7.2fx |\n' "\`$pattern\`" "$name ${flags// /}" \
		"$same" "$mo" "$mt" "$(echo "$mo/$mt" | bc -l)" $((rss / 1024)) "$co" "$ct" "$(echo "$co/$ct" | bc -l)"
done <<<"$cases"

if [ -z "$only" ] || [[ glob =~ $only ]]; then
	"$globbin" '**/*.go' | grep -v '^$' | LC_ALL=C sort >"$work/ours"
	"$fd" "${fdflags[@]}" --type f '*.go' | sed 's#^\./##' | LC_ALL=C sort >"$work/fd"
	if ! cmp -s "$work/ours" "$work/fd"; then
		echo "glob '**/*.go': FILE SETS DIFFER (ours $(wc -l <"$work/ours"), fd $(wc -l <"$work/fd"))"
		diff "$work/ours" "$work/fd" | head -10
		status=1
	fi
	read -r mo mt rss co ct < <(pairs "$globbin" '**/*.go' -- "$fd" "${fdflags[@]}" --type f '*.go')
	printf '| %-28s | %-18s | %9s | %5s ms | %5s ms | %6.2fx | %4d MiB | %5s ms | %6s ms | %7.2fx |\n' "\`**/*.go\`" "glob vs fd" \
		"$(wc -l <"$work/ours")" "$mo" "$mt" "$(echo "$mo/$mt" | bc -l)" $((rss / 1024)) "$co" "$ct" "$(echo "$co/$ct" | bc -l)"
fi
exit $status
