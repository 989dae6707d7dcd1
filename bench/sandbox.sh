#!/usr/bin/env bash
# sandbox.sh: the cost of one bash call ("echo hi", median of 50) through
# codetools' bash tool, contained only and under each sandbox backend
# (codetools' TestBashCallCost), at two revisions: BASE and AFTER (default:
# the work tree). Both test binaries are built first, then run in turns
# (BASE, AFTER, BASE, AFTER, ... ROUNDS times, default 3) so that both see
# the same load. Prints each run's medians, the median of each mode over
# the rounds, and the machine's load before and after.
#   bench/sandbox.sh [BASE [AFTER]]     e.g. bench/sandbox.sh ab04939 5b65906
# Without BASE it measures the work tree alone.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
work="$(mktemp -d)"
cleanup() {
  for d in "$work"/tree-*; do
    [ -d "$d" ] && git worktree remove --force "$d" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
build() { # name revision ("" for the work tree)
  local dir=.
  if [ -n "$2" ]; then
    dir="$work/tree-$1"
    git worktree add --detach "$dir" "$2" >/dev/null 2>&1
  fi
  (cd "$dir" && go test -c -o "$work/$1.test" ./codetools/)
}
names=()
if [ -n "${1:-}" ]; then
  build base "$1"
  names+=(base)
fi
build after "${2:-}"
names+=(after)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    (cd codetools && LLMTOOLKIT_MEASURE=1 "$work/$n.test" -test.count=1 -test.v -test.run '^TestBashCallCost$') |
      grep 'median' | sed 's/^ *bash_cost_linux_test.go:[0-9]*: //' | tee -a "$work/$n.out" | sed "s/^/$n $round: /"
  done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== median over $rounds rounds of each run's median"
for n in "${names[@]}"; do
  awk -v n="$n" '{
      split($0, a, " median "); mode = a[1]; sub(/ +$/, "", mode)
      split(a[2], b, " "); v = b[1]
      if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /µs$/) { sub(/µs$/, "", v); v /= 1000 } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 }
      vals[mode] = vals[mode] " " v; if (!(mode in seen)) { order[++k] = mode; seen[mode] = 1 }
    } END {
      for (i = 1; i <= k; i++) {
        m = split(substr(vals[order[i]], 2), x, " ")
        for (p = 1; p <= m; p++) for (q = p + 1; q <= m; q++) if (x[q] + 0 < x[p] + 0) { t = x[p]; x[p] = x[q]; x[q] = t }
        printf "%-6s %-28s %8.1f ms\n", n, order[i], x[int((m + 1) / 2)]
      }
    }' "$work/$n.out"
done
