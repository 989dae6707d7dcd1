#!/usr/bin/env bash
# interop: proves that llmtoolkit's core module can be embedded beside other
# Go agent libraries. For each of firebase/genkit and cloudwego/eino it makes a
# scratch module that requires the core (through a replace directive to this
# clone) and the newest version of the library the module proxy serves, then
# builds and runs a program (scripts/testdata/interop/<name>/main.go) that
# makes one tool call through llmtoolkit.Execute, recorded by trace in SQLite.
#
#   bash scripts/interop.sh            # both
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
)
declare -A updates=(
  [genkit]=""
  [eino]="github.com/cloudwego/eino/components/tool/utils"
)

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(genkit eino)
status=0
for name in "${names[@]}"; do
  dir="$work/$name"
  mkdir -p "$dir"
  cp "$here/testdata/interop/$name/main.go" "$dir/"
  (
    cd "$dir"
    go mod init "interop/$name" >/dev/null 2>&1
    go mod edit -replace "github.com/llmtoolkit/llmtoolkit=$core"
    go mod edit -require "github.com/llmtoolkit/llmtoolkit@v0.0.0"
    # shellcheck disable=SC2086
    go get ${gets[$name]} 2>/dev/null
    go mod tidy 2>/dev/null
    if [ -n "${updates[$name]}" ]; then
      # shellcheck disable=SC2086
      go get -u ${updates[$name]} 2>/dev/null
      go mod tidy 2>/dev/null
    fi
    echo "== $name: $(go list -m all | grep -E 'genkit/go |cloudwego/eino |bytedance/sonic |invopop/jsonschema |go.opentelemetry.io/otel ' | tr '\n' ' ')"
    go run .
  ) || { echo "== $name: FAILED"; status=1; }
done
exit $status
