#!/usr/bin/env bash
# interop: proves that llmtoolkit's core module works with other agent
# libraries and MCP peers.
#
# genkit, eino: for each of firebase/genkit and cloudwego/eino it makes a
# scratch module that requires the core (through a replace directive to
# this clone) and the newest version of the library the module proxy
# serves, then builds and runs a program
# (scripts/testdata/interop/<name>/main.go) that makes one tool call
# through llmtoolkit.Execute, recorded by trace in SQLite.
#
# mcp-ts: the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
# pinned with its dependencies in scripts/testdata/interop/mcp-ts/
# package-lock.json, installed by npm ci into the scratch directory) both
# ways over stdio, with multimodal content: its client calls a tool served
# by mcp.Serve (a real child process) and checks the image's SHA-256 and
# media type; mcp.Connect calls its server's tool and checks that the
# image, audio and PDF arrive as parts, byte for byte (main.go, client.mjs,
# server.mjs there). Needs node 18 or later and npm.
#
#   bash scripts/interop.sh            # all three
#   bash scripts/interop.sh genkit     # one
#   LLMTOOLKIT_CORE=/path/to/clone bash scripts/interop.sh   # another core
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
core=${LLMTOOLKIT_CORE:-$(cd "$here/.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What each library needs: its newest release, then, once the imports are
# known, "go get -u" of the packages the program uses (eino needs a sonic
# that builds on the running Go: v1.15.5 or later on Go 1.26).
declare -A gets=(
  [genkit]="github.com/firebase/genkit/go@latest"
  [eino]="github.com/cloudwego/eino@latest"
  [mcp-ts]=""
)
declare -A updates=(
  [genkit]=""
  [eino]="github.com/cloudwego/eino/components/tool/utils"
  [mcp-ts]=""
)

# scratch_module NAME: a module in $work/NAME holding the program of NAME,
# requiring the core and the library's newest release.
scratch_module() {
  local name=$1 dir="$work/$1"
  mkdir -p "$dir"
  cp "$here/testdata/interop/$name/main.go" "$dir/"
  cd "$dir"
  go mod init "interop/$name" >/dev/null 2>&1
  go mod edit -replace "github.com/llmtoolkit/llmtoolkit=$core"
  go mod edit -require "github.com/llmtoolkit/llmtoolkit@v0.0.0"
  if [ -n "${gets[$name]}" ]; then
    # shellcheck disable=SC2086
    go get ${gets[$name]} 2>/dev/null
  fi
  go mod tidy 2>/dev/null
  if [ -n "${updates[$name]}" ]; then
    # shellcheck disable=SC2086
    go get -u ${updates[$name]} 2>/dev/null
    go mod tidy 2>/dev/null
  fi
}

# mcp_ts runs the TypeScript SDK's client against mcp.Serve, and
# mcp.Connect against the TypeScript SDK's server.
mcp_ts() {
  local src="$here/testdata/interop/mcp-ts" dir="$work/mcp-ts"
  scratch_module mcp-ts
  go build -o "$dir/mcp-ts" .
  cp "$src/package.json" "$src/package-lock.json" "$src/client.mjs" "$src/server.mjs" "$dir/"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
  echo "== mcp-ts: node $(node --version), @modelcontextprotocol/sdk $(node -p "require('$dir/node_modules/@modelcontextprotocol/sdk/package.json').version")"
  local digest
  read -r -a digest < <("$dir/mcp-ts" digest)
  node "$dir/client.mjs" "${digest[0]}" "${digest[1]}" "$dir/mcp-ts" serve
  "$dir/mcp-ts" connect node "$dir/server.mjs"
}

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(genkit eino mcp-ts)
status=0
for name in "${names[@]}"; do
  if [ "$name" = mcp-ts ]; then
    (mcp_ts) || { echo "== $name: FAILED"; status=1; }
    continue
  fi
  (
    scratch_module "$name"
    echo "== $name: $(go list -m all | grep -E 'genkit/go |cloudwego/eino |bytedance/sonic |invopop/jsonschema |go.opentelemetry.io/otel ' | tr '\n' ' ')"
    go run .
  ) || { echo "== $name: FAILED"; status=1; }
done
exit $status
