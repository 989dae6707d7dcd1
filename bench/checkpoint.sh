#!/usr/bin/env bash
# bench/checkpoint.sh: per-turn checkpoint cost (package checkpoint, SQLite
# store) against `git status` on a git copy of the same tree, in one run:
# nothing changed, and 10 files changed; the store's size after a 200-turn
# run; rewind times. Medians, ratios and the machine's load.
#
#   bash bench/checkpoint.sh [TREE]   TREE defaults to $(go env GOROOT)/src
#   RUNS=9 TURNS=200 bash bench/checkpoint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./bench/cmd/checkpointbench -runs "${RUNS:-9}" -turns "${TURNS:-200}" "$@"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
