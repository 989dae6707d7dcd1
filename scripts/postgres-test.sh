#!/usr/bin/env bash
# Runs the trace tests against a private PostgreSQL server (and SQLite):
#
#   bash scripts/postgres-test.sh            # go test ./trace/...
#   bash scripts/postgres-test.sh -race -v   # extra flags go to go test
#
# scripts/postgres.sh installs PostgreSQL from Debian's packages if needed,
# starts the server and prints LLMTOOLKIT_TEST_POSTGRES_DSN.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/postgres.sh)"
export LLMTOOLKIT_TEST_POSTGRES_DSN
exec go test "$@" ./trace/...
