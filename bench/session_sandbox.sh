#!/usr/bin/env bash
# bench/session_sandbox.sh: `echo hi` through codetools' bash, median of RUNS
# calls (default 50), in each way a command runs here: contained only,
# Landlock and bubblewrap with a sandbox per call and in the session's
# sandbox (WithSessionSandbox: one server forks every command), beside bare
# bash, unshare and bwrap
# started the same way, in one run; prints the medians and p90 and the load.
# (bench/sandbox.sh compares two revisions of the per-call cost.)
#
#   bash bench/session_sandbox.sh       RUNS=200 bash bench/session_sandbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-50}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/sandboxbench" ./bench/cmd/sandboxbench
echo "load before: $(uptime)"
"$bin/sandboxbench" -runs "$runs"
echo "load after:  $(uptime)"
