#!/usr/bin/env bash
# ci-times: prints the time of every stage of a saved .ci/run log (the
# "-- NAME: S s" line .ci/run prints after each stage), or of two logs side
# by side with the change, so a stage that got slower shows:
#
#   bash .ci/run 2>&1 | tee ci.log
#   bash scripts/ci-times.sh ci.log            # one run
#   bash scripts/ci-times.sh before.log ci.log # two runs, and after/before
set -euo pipefail
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: ci-times.sh LOG [LOG2]" >&2; exit 2; }
awk '
  FNR == 1 { file++ }
  /^-- .*: [0-9.]+ s( \(FAILED.*\))?$/ {
    line = substr($0, 4)
    failed = line ~ / \(FAILED/
    sub(/ \(FAILED.*\)$/, "", line)
    secs = line; sub(/.*: /, "", secs); sub(/ s$/, "", secs)
    name = line; sub(/: [0-9.]+ s$/, "", name)
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    t[file, name] = secs + 0; f[file, name] = failed
    total[file] += secs
  }
  END {
    for (i = 1; i <= n; i++) {
      name = order[i]; short = name; sub(/ +\(.*$/, "", short); short = substr(short, 1, 60)
      if (file == 1) printf "%8.1f s  %s%s\n", t[1, name], short, f[1, name] ? "  FAILED" : ""
      else {
        ratio = t[1, name] > 0 ? sprintf("%5.2fx", t[2, name] / t[1, name]) : "    -"
        printf "%8.1f s %8.1f s  %s  %s\n", t[1, name], t[2, name], ratio, short
      }
    }
    if (file == 1) printf "%8.1f s  total\n", total[1]
    else printf "%8.1f s %8.1f s  %5.2fx  total\n", total[1], total[2], total[2] / total[1]
  }
' "$@"
