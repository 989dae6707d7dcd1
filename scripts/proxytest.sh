#!/usr/bin/env bash
# proxytest: proves that a user can install every module of this repository
# with the go command alone. It serves the modules from a Go module proxy on
# disk, each at the version versions.txt names, its zip made from the work
# tree as the go command makes it from a tag (scripts/proxyenv.sh,
# tools/modproxy), with every other module from the usual proxy; then, in
# empty scratch modules, without go.work, it runs what a user runs:
#
#   - go get of the core, then the quickstart (examples/quickstart) built and run;
#   - go get of each nested module, then go build and go vet of its packages;
#   - an eino agent (adapters/eino's Example) and a DBOS run (durable/dbos's
#     Example) built and run as programs of their own;
#   - go install github.com/llmtoolkit/llmtoolkit/cmd/llmtoolkit@VERSION, then
#     llmtoolkit --help.
#
#   bash scripts/proxytest.sh                              # this tree
#   LLMTOOLKIT_TREE=/other/clone bash scripts/proxytest.sh # another (e.g. an older commit)
#
# Each step prints PASS or FAIL and the seconds it took; the script fails
# if one fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
repo=$PWD
tree=$(cd "${LLMTOOLKIT_TREE:-.}" && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# LLMTOOLKIT_PROXYENV names a file proxyenv.sh wrote for this tree, to reuse
# its proxy and module cache (.ci/run shares one between its stages).
if [[ -n "${LLMTOOLKIT_PROXYENV:-}" && -z "${LLMTOOLKIT_TREE:-}" ]]; then
  cp "$LLMTOOLKIT_PROXYENV" "$work/env"
else
  bash scripts/proxyenv.sh "$work" > "$work/env" || { echo "FAIL  the proxy could not be built"; exit 1; }
fi
eval "$(cat "$work/env")"
export GOBIN="$work/bin"

core=github.com/llmtoolkit/llmtoolkit
version() { # the version versions.txt names for a folder
  awk -v f="$1" '$1 == f { print $2; exit }' "$repo/versions.txt"
}
v=$(version .)

n=0 status=0
# step NAME COMMAND...: runs COMMAND in a new empty module.
step() {
  local name=$1; shift
  n=$((n + 1))
  local dir="$work/step$n" t=$SECONDS
  mkdir -p "$dir"
  if (cd "$dir" && go mod init example.com/user >/dev/null 2>&1 && "$@") >"$dir.log" 2>&1; then
    echo "PASS  $name ($((SECONDS - t)) s)"
  else
    echo "FAIL  $name ($((SECONDS - t)) s)"; sed 's/^/      /' "$dir.log" | tail -15; status=1
  fi
}

# program FILE: the Example of an example_test.go file as a main package.
program() {
  sed -E 's/^package [a-z]+_test$/package main/' "$1" > example.go
  printf '\nfunc main() { Example() }\n' >> example.go
}

quickstart() {
  go get "$core@$v" &&
    cp -r "$tree/examples/quickstart/main.go" "$tree/examples/quickstart/testdata" . &&
    go mod tidy && go run . >run.log && grep -q . run.log
}
step "go get $core@$v; go run the quickstart" quickstart

nested() {
  local folder=$1 path="$core/$1" ver
  ver=$(version "$folder")
  go get "$path@$ver" && go build "$path/..." || return 1
  # A module whose tests build C (conformance: mattn/go-sqlite3) has its
  # test imports resolved here and is vetted by the vet stage: a cgo package
  # compiled from this scratch module cache cannot reuse what the test
  # stage compiled, even under -trimpath (its C compiler's -I names the
  # folder), and took 47 s of the 70 of this step.
  local cgo
  cgo=$(go list -test -deps -f '{{if and (not .Standard) .CgoFiles}}{{.ImportPath}}{{end}}' "$path/...") || return 1
  if [[ -n "$cgo" ]]; then
    echo "its test imports resolve; not vetted here: cgo in" $cgo
  else
    go vet "$path/..."
  fi
}
while read -r folder _; do
  [[ -z "$folder" || "$folder" == \#* || "$folder" == . || "$folder" == cmd/llmtoolkit ]] && continue
  step "go get $core/$folder@$(version "$folder"); go build and go vet its packages (of tests that build C, their imports resolved)" nested "$folder"
done < versions.txt

example() {
  local folder=$1
  go get "$core/$folder@$(version "$folder")" && program "$tree/$folder/example_test.go" &&
    go mod tidy && go run . >run.log && cat run.log && grep -q . run.log
}
step "an eino agent (adapters/eino's Example) as a program of its own" example adapters/eino
step "a DBOS run (durable/dbos's Example) as a program of its own" example durable/dbos

install() {
  go install "$core/cmd/llmtoolkit@$(version cmd/llmtoolkit)" && "$GOBIN/llmtoolkit" --help | head -3
}
step "go install $core/cmd/llmtoolkit@$(version cmd/llmtoolkit); llmtoolkit --help" install

exit $status
