#!/usr/bin/env bash
# test: runs "go test" over every module of this repository (the core and
# the nested ones, scripts/modules.sh) against the local tree. The modules of
# go.work are tested in one "go test" from the root, so the go command
# schedules all their packages together (a slow package of one module
# overlaps the others' instead of waiting its turn); a module left out of
# go.work (scripts/inworkspace.sh) is tested as a user would build it
# (scripts/asuser.sh), beside the first. Extra arguments go to every
# "go test", e.g.:
#
#   bash scripts/test.sh                 # the README's test command
#   bash scripts/test.sh -count=1        # without the test cache
#   bash scripts/test.sh --race          # the packages built for concurrency
#                                        # (scripts/racepkgs.sh) under -race
#                                        # -short, the other packages beside
#                                        # them without -race, then without
#                                        # -race the tests -short skipped:
#                                        # every test once
#
# CI runs LLMTOOLKIT_STRESS=1 bash scripts/test.sh --race: one pass that is
# both the README's test command and the race detector's, instead of testing
# the concurrent packages twice.
#
# (--here, used by this script itself: test the module in the current folder.)
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
repo=$(cd "$(dirname "$0")/.." && pwd)
race="" here=""
if [[ "${1:-}" == --race ]]; then race=1; shift; fi
if [[ "${1:-}" == --here ]]; then here=1; shift; fi

# gotest PATTERN...: go test "$@" of the packages PATTERN names (in the
# current folder's module, or go.work's modules from the root). With
# --race: the packages built for concurrency under -race with -short and,
# beside them, the other packages without -race; then, without -race, the
# tests -short left out there (tools/testskips lists them): every test
# runs once. The race pass runs
# four test binaries at once (-p 4, or LLMTOOLKIT_RACE_P), not one per
# core: its slowest packages wait on processes and servers more than they
# compute (codetools took 130 s of CPU in 312 s, internal/sandbox 40 s in
# 217 s), so two at a time left the cores idle.
gotest() {
  if [[ -z "$race" ]]; then
    go test "${args[@]}" "$@"
    return
  fi
  local all racy rest rc=0 plainpid=""
  all=$(go list "$@") || return 1
  racy=$(bash "$repo/scripts/racepkgs.sh" "$@") || return 1
  rest=$(comm -23 <(printf '%s\n' $all | sort) <(printf '%s\n' $racy | sort))
  # The other packages (no goroutine of their own) run without -race beside
  # the race pass, which leaves a core idle much of its time; their output
  # is printed after it.
  if [[ -n "$rest" ]]; then
    # shellcheck disable=SC2086
    go test "${args[@]}" $rest >"$scratch/plain.log" 2>&1 &
    plainpid=$!
  fi
  local reruns=()
  if [[ -n "$racy" ]]; then
    echo "-- under -race -short: the $(wc -w <<<"$racy") packages built for concurrency"
    # shellcheck disable=SC2086
    go test -race -short -json "${args[@]}" -p "${LLMTOOLKIT_RACE_P:-4}" $racy | "$LLMTOOLKIT_TESTSKIPS" -skips "$scratch/skipped"
    local st=("${PIPESTATUS[@]}")
    [[ ${st[0]} -eq 0 && ${st[1]} -eq 0 ]] || rc=1
    [[ -f "$scratch/skipped" ]] || : >"$scratch/skipped"
    local pkg tests
    for pkg in $(cut -f1 "$scratch/skipped" | sort -u); do
      tests=$(awk -F'\t' -v p="$pkg" '$1 == p { print $2 }' "$scratch/skipped" | paste -sd'|')
      reruns+=("$pkg" "^($tests)\$")
    done
  fi
  if [[ -n "$plainpid" ]]; then
    echo "-- without -race (run beside the race pass): the packages that start no goroutine"
    wait "$plainpid" || rc=1
    cat "$scratch/plain.log"
  fi
  if [[ ${#reruns[@]} -gt 0 ]]; then
    # One go test per package, given its own -run, up to LLMTOOLKIT_RERUN_P
    # (default 3) at once: the slowest of them (durable/dbos's crashes,
    # codetools' real language servers) mostly wait.
    echo "-- without -race: the tests -short left out above, $((${#reruns[@]} / 2)) packages"
    local i pids=() running=0 max=${LLMTOOLKIT_RERUN_P:-3}
    for ((i = 0; i < ${#reruns[@]}; i += 2)); do
      if ((running >= max)); then wait -n || true; running=$((running - 1)); fi
      go test "${args[@]}" -run "${reruns[i + 1]}" "${reruns[i]}" >"$scratch/rerun.$i.log" 2>&1 &
      pids+=($!) running=$((running + 1))
    done
    for ((i = 0; i < ${#pids[@]}; i++)); do
      wait "${pids[i]}" || rc=1
      cat "$scratch/rerun.$((i * 2)).log"
    done
  fi
  return $rc
}
# Before the caller's arguments (a later flag wins):
#   -vet=off: CI's go vet stage vets every package, with every check, and
#     the few checks go test runs cost about 57 s of a cold run's CPU;
#   -p 4 (LLMTOOLKIT_TEST_P): test binaries that wait on processes and
#     servers (codetools, internal/sandbox) no longer hold the two slots of
#     a 2-core machine while packages wait to be compiled.
# The conformance module's tests against the peers that are slow to build
# (the official OpenAI and Anthropic Go SDKs, about 80 s and 45 s of
# compiling, and mattn/go-sqlite3, cgo, 55 s) are behind the build tag
# "peers": "bash scripts/test.sh -tags=peers" runs them, and CI does
# (.ci/run's GOFLAGS); without it that module runs its other tests.
args=(-vet=off -p "${LLMTOOLKIT_TEST_P:-4}" "$@")
user_args=("$@")
scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
# tools/testskips, built once (the modules outside go.work are tested by
# this script run again, with the path in the environment).
if [[ -n "$race" && -z "${LLMTOOLKIT_TESTSKIPS:-}" ]]; then
  (cd "$repo" && go build -o "$scratch/testskips" ./tools/testskips) || exit 1
  export LLMTOOLKIT_TESTSKIPS=$scratch/testskips
fi
if [[ -n "$here" ]]; then
  gotest ./...
  exit
fi

cd "$repo"
work=() outside=()
for mod in $(bash scripts/modules.sh); do
  if bash scripts/inworkspace.sh "$mod"; then work+=("$mod"); else outside+=("$mod"); fi
done

# The modules outside go.work, one after the other, in the background.
pid=""
if [[ ${#outside[@]} -gt 0 ]]; then
  # LLMTOOLKIT_PROXYENV: a file proxyenv.sh wrote, to reuse (.ci/run's).
  env=${LLMTOOLKIT_PROXYENV:-$scratch/env}
  [[ -n "${LLMTOOLKIT_PROXYENV:-}" ]] || bash scripts/proxyenv.sh "$scratch/proxy" > "$env"
  (
    rc=0
    for mod in "${outside[@]}"; do
      echo "== go test ./... in $mod (as a user builds it, without go.work)"
      # asuser.sh runs the command in the module; gotest is this script's.
      LLMTOOLKIT_PROXYENV=$env bash scripts/asuser.sh "$mod" \
        bash "$repo/scripts/test.sh" ${race:+--race} --here "${user_args[@]}" || rc=1
    done
    exit $rc
  ) >"$scratch/outside.log" 2>&1 &
  pid=$!
fi

status=0
patterns=()
for mod in "${work[@]}"; do
  if [[ "$mod" == . ]]; then patterns+=(./...); else patterns+=("./$mod/..."); fi
done
echo "== go test in the modules of go.work: ${work[*]}"
gotest "${patterns[@]}" || status=1

if [[ -n "$pid" ]]; then
  wait "$pid" || status=1
  cat "$scratch/outside.log"
fi
exit $status
