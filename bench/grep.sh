#!/usr/bin/env bash
# bench/grep.sh: time codetools' grep and glob against ripgrep and fd on the
# Go source tree (warm cache), check that they find the same things, and
# print median wall times and ratios.
#
#   bash bench/grep.sh [TREE]      TREE defaults to $(go env GOROOT)/src
#
# Installs ripgrep, fd-find and hyperfine from Debian's packages when missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$(go env GOROOT)/src}
runs=${RUNS:-10}

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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/grepbench
(cd "$here/.." && go build -o "$bin" ./bench/cmd/grepbench)
cd "$tree"

# keys turns "path:N:text" or "path:N: text" lines into sorted "path:N".
keys() { sed -nE 's/^([^:]+):([0-9]+):.*/\1:\2/p' | sort; }

median() { # hyperfine JSON -> median seconds
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$1"
}

compare() { # name ours_cmd theirs_cmd
	local name=$1 ours=$2 theirs=$3
	hyperfine -N -w 2 -r "$runs" --export-json "$work/o.json" "$ours" >/dev/null 2>&1
	hyperfine -N -w 2 -r "$runs" --export-json "$work/t.json" "$theirs" >/dev/null 2>&1
	local mo mt
	mo=$(median "$work/o.json")
	mt=$(median "$work/t.json")
	printf '%-28s ours %7.1f ms  theirs %7.1f ms  ratio %.2fx\n' "$name" \
		"$(echo "$mo*1000" | bc -l)" "$(echo "$mt*1000" | bc -l)" "$(echo "$mo/$mt" | bc -l)"
}

status=0
for pattern in 'Unmarshal' 'func \w+Error\('; do
	"$bin" grep "$pattern" | keys >"$work/ours"
	rg -n --hidden --no-require-git "$pattern" | keys >"$work/rg"
	if cmp -s "$work/ours" "$work/rg"; then
		echo "grep '$pattern': same $(wc -l <"$work/ours") matching lines as rg"
	else
		echo "grep '$pattern': MATCH SETS DIFFER (ours $(wc -l <"$work/ours"), rg $(wc -l <"$work/rg"))"
		diff "$work/ours" "$work/rg" | head -20
		status=1
	fi
	compare "grep '$pattern'" "$bin grep '$pattern'" "rg -n --hidden --no-require-git '$pattern'"
	/usr/bin/time -f "  peak RSS of ours: %M KiB" "$bin" grep "$pattern" >/dev/null
done

"$bin" glob '**/*.go' | grep -v '^$' | sort >"$work/ours"
"$fd" "${fdflags[@]}" --type f '*.go' | sed 's#^\./##' | sort >"$work/fd"
if cmp -s "$work/ours" "$work/fd"; then
	echo "glob '**/*.go': same $(wc -l <"$work/ours") files as fd"
else
	echo "glob '**/*.go': FILE SETS DIFFER (ours $(wc -l <"$work/ours"), fd $(wc -l <"$work/fd"))"
	diff "$work/ours" "$work/fd" | head -20
	status=1
fi
compare "glob '**/*.go'" "$bin glob '**/*.go'" "$fd ${fdflags[*]} '*.go'"
exit $status
