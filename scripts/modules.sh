#!/usr/bin/env bash
# modules: lists the folders of this repository's Go modules, the core (.)
# first.
set -euo pipefail
cd "$(dirname "$0")/.."
echo .
git ls-files --cached --others --exclude-standard '*/go.mod' | grep -v '/testdata/' | xargs -r -n1 dirname | sort
