#!/usr/bin/env bash
# test: runs "go test" in every module of this repository (the core, then the
# nested ones, scripts/modules.sh), against the local tree through go.work.
# A module left out of go.work (scripts/inworkspace.sh) is tested as a user
# would build it (scripts/asuser.sh). Extra arguments go to every "go test", e.g.:
# bash scripts/test.sh -race -count=1
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
status=0
proxy=""
trap '[[ -n "$proxy" ]] && { chmod -R u+w "$proxy"; rm -rf "$proxy"; }' EXIT
for mod in $(bash scripts/modules.sh); do
  echo "== go test ./... in $mod"
  if bash scripts/inworkspace.sh "$mod"; then
    (cd "$mod" && go test "$@" ./...) || status=1
  else
    if [[ -z "$proxy" ]]; then
      proxy=$(mktemp -d)
      bash scripts/proxyenv.sh "$proxy" > "$proxy/env"
    fi
    LLMTOOLKIT_PROXYENV=$proxy/env bash scripts/asuser.sh "$mod" go test "$@" ./... || status=1
  fi
done
exit $status
