#!/usr/bin/env bash
# test: runs "go test" in every module of this repository (the core, then the
# nested ones: otelkit, cmd/llmtoolkit, conformance). Extra arguments go to
# every "go test", e.g.: bash scripts/test.sh -race -count=1
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for mod in $(bash scripts/modules.sh); do
  echo "== go test ./... in $mod"
  (cd "$mod" && go test "$@" ./...) || status=1
done
exit $status
