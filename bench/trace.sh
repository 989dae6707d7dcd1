#!/usr/bin/env bash
# trace.sh: how close the audit trail comes to the database driver's own
# speed. Interleaved in one process, on SQLite (WAL) and, when
# LLMTOOLKIT_TEST_POSTGRES_DSN is set (eval "$(bash scripts/postgres.sh)"),
# PostgreSQL: a synchronous Strict Recorder against a raw prepared INSERT
# of the same row, and the Async Recorder against the driver's batched
# multi-row INSERT in one transaction. Prints each side, the ratio, and the
# machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
LLMTOOLKIT_TRACE_RATIO=1 go test -count=1 -v -run 'TestDriverRatio' ./trace/ | grep -E 'sync:|async:|^(ok|FAIL|---)'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
