#!/usr/bin/env bash
# v4a_reference: installs the reference V4A applier, the Agents SDK for
# JavaScript's applyDiff (@openai/agents-core, pinned below), into
# $LLMTOOLKIT_V4A_DIR (default under /tmp, outside the repository; reused
# when the pinned version is there), then runs internal/patch's
# differential test against it (TestReferenceApplier: the corpus's
# outcomes, counted, in the -v output). Needs node (20 or later) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

version=0.20.0 # keep equal to referenceVersion in internal/patch/reference_test.go
dir="${LLMTOOLKIT_V4A_DIR:-/tmp/llmtoolkit-v4a-$version}"
pkg="$dir/node_modules/@openai/agents-core/package.json"
if [ ! -f "$pkg" ] || ! grep -q "\"version\": \"$version\"" "$pkg"; then
  echo "== installing @openai/agents-core@$version into $dir"
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/agents-core@$version"
fi
[ "${1:-}" = --install-only ] && exit 0
LLMTOOLKIT_V4A_DIR="$dir" go test -count=1 -run 'TestReferenceApplier' -v ./internal/patch | grep -v '^=== RUN'
