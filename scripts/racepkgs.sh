#!/usr/bin/env bash
# racepkgs: lists the packages of the module in the current folder that the
# race pass (.ci/run) runs: those whose non-test code starts a goroutine or
# uses package sync or sync/atomic, that is, the packages built to be used
# from several goroutines. The rest (parsers, matchers, converters: pure
# functions of their input) run once, in the test stage.
#
#   (cd MOD && bash ../scripts/racepkgs.sh)   # import paths, one a line
#   bash scripts/racepkgs.sh --why           # with the reason for each
#   bash scripts/racepkgs.sh ./... ./otelkit/...  # of these patterns (go.work's
#                                                 # modules from the root)
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
why=""
if [[ "${1:-}" == --why ]]; then why=--why; shift; fi
[[ $# -eq 0 ]] && set -- ./...
go list -f '{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}}|{{join .Imports " "}}' "$@" |
  while IFS='|' read -r path dir files imports; do
    [[ -z "$files" ]] && continue
    reason=""
    case " $imports " in
      *" sync "* | *" sync/atomic "*) reason="imports sync" ;;
    esac
    if [[ -z "$reason" ]] && (cd "$dir" && grep -qE '(^|[^A-Za-z0-9_."])go (func|[A-Za-z_][A-Za-z0-9_.]*\()' $files); then
      reason="starts goroutines"
    fi
    [[ -z "$reason" ]] && continue
    if [[ "$why" == --why ]]; then echo "$path  ($reason)"; else echo "$path"; fi
  done
