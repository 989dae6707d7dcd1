#!/usr/bin/env bash
# Starts a private PostgreSQL server for the trace tests and prints the
# variable that enables them:
#
#   eval "$(bash scripts/postgres.sh)"   # then: go test ./trace/...
#
# Installs PostgreSQL from Debian's packages when it is missing (as root), runs
# the server as the postgres user on 127.0.0.1:${LLMTOOLKIT_PG_PORT:-54329}
# with its data under ${LLMTOOLKIT_PG_DIR:-/tmp/llmtoolkit-pg}, and creates
# the database llmtoolkit_test. Run it again to reuse the running server;
# `bash scripts/postgres.sh stop` stops it.
set -euo pipefail
port=${LLMTOOLKIT_PG_PORT:-54329}
dir=${LLMTOOLKIT_PG_DIR:-/tmp/llmtoolkit-pg}

bindir=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n1)" 2>/dev/null || true)
[ -x "$bindir/initdb" ] || bindir=""
if [ -z "$bindir" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "PostgreSQL is not installed; run as root or: apt-get install -y postgresql" >&2
    exit 1
  fi
  echo "installing PostgreSQL from Debian's packages..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
  bindir=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n1)")
fi

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "${1:-}" = stop ]; then
  as_pg "$bindir/pg_ctl" -D "$dir" -m fast stop >&2 || true
  exit 0
fi

if [ ! -f "$dir/PG_VERSION" ]; then
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
  as_pg "$bindir/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 >/dev/null
fi
if ! as_pg "$bindir/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
  as_pg "$bindir/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
    -o "-p $port -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off" start >&2
fi
if ! as_pg "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname='llmtoolkit_test'" | grep -q 1; then
  as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres llmtoolkit_test
fi
echo "export LLMTOOLKIT_TEST_POSTGRES_DSN='host=127.0.0.1 port=$port user=postgres dbname=llmtoolkit_test sslmode=disable'"
