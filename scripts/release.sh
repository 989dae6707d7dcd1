#!/usr/bin/env bash
# release: releases this repository's modules at the versions versions.txt
# names (its one source of truth).
#
#   bash scripts/release.sh --set     # set every require of one of the modules to its version
#   bash scripts/release.sh --check   # fail unless every go.mod is as --set leaves it, with no replace
#   bash scripts/release.sh           # --set, --check, then commit and tag every module
#
# The tags are the Go command's: VERSION for the core, FOLDER/VERSION for a
# nested module (otelkit/v0.1.0, adapters/eino/v0.1.0, ...), made on the
# commit that records RELEASED = VERSION in versions.txt. The script does not
# push: it prints the command that does.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mode=${1:-release}

folders=() versions=() paths=()
while read -r folder version _; do
  [[ -z "$folder" || "$folder" == \#* ]] && continue
  folders+=("$folder") versions+=("$version")
  paths+=("$(awk '$1 == "module" { print $2; exit }' "$folder/go.mod")")
done < versions.txt

# set: every go.mod that requires one of the modules requires its version,
# and go.work replaces that version with the module's folder (Go reads the
# go.mod of every required version, even of a workspace module).
set_requires() {
  local f i
  for i in "${!paths[@]}"; do
    # Every replace of the module goes, whatever version it names (a
    # bumped version leaves the old one's behind otherwise).
    local old
    for old in $(go work edit -json | awk -v p="\"${paths[$i]}\"," '
        /"Old": \{/ { inold = 1; path = ""; next }
        inold && /"Path":/ { path = $2 }
        inold && /"Version":/ { if (path == p) { v = $2; gsub(/[",]/, "", v); print v } }
        inold && /\}/ { inold = 0 }'); do
      go work edit -dropreplace="${paths[$i]}@$old"
    done
    go work edit -dropreplace="${paths[$i]}" -replace="${paths[$i]}@${versions[$i]}=./${folders[$i]#.}"
  done
  for f in "${folders[@]}"; do
    for i in "${!paths[@]}"; do
      if grep -qE "^[[:space:]]*(require[[:space:]]+)?${paths[$i]//./\\.} " "$f/go.mod"; then
        go mod edit -require="${paths[$i]}@${versions[$i]}" "$f/go.mod"
      fi
    done
  done
}

# check: no replace in any go.mod, every require of a module of this
# repository names the version versions.txt gives it, every module of
# modules.sh is listed (but tools and durable/temporal/crashtest, a
# test-only module, which are not released).
check() {
  local status=0 f i got
  for i in "${!paths[@]}"; do
    got=$(go work edit -json | awk -v p="\"${paths[$i]}\"," '$1 == "\"Path\":" && $2 == p { getline; gsub(/[",]/, "", $2); print $2; exit }')
    if [[ "$got" != "${versions[$i]}" ]]; then
      echo "release: go.work does not replace ${paths[$i]} ${versions[$i]} with ./${folders[$i]#.}"; status=1
    fi
  done
  for f in $(bash scripts/modules.sh); do
    if go mod edit -json "$f/go.mod" | grep -q '"Replace": \['; then
      echo "release: $f/go.mod has a replace directive (go.work makes a clone use the local tree)"; status=1
    fi
    [[ "$f" == tools || "$f" == durable/temporal/crashtest ]] && continue # not released: tools, and a test-only module
    if ! printf '%s\n' "${folders[@]}" | grep -qxF "$f"; then
      echo "release: module $f is not listed in versions.txt"; status=1
    fi
    for i in "${!paths[@]}"; do
      got=$(go mod edit -json "$f/go.mod" | awk -v p="\"${paths[$i]}\"," '$1 == "\"Path\":" && $2 == p { getline; gsub(/[",]/, "", $2); print $2 }')
      if [[ -n "$got" && "$got" != "${versions[$i]}" ]]; then
        echo "release: $f requires ${paths[$i]} $got, versions.txt says ${versions[$i]}"; status=1
      fi
    done
  done
  return $status
}

case "$mode" in
  --set) set_requires ;;
  --check) check && echo "release: every go.mod requires the versions of versions.txt, with no replace" ;;
  release)
    [[ -z "$(git status --porcelain)" ]] || { echo "release: the work tree has changes; commit them first"; exit 1; }
    set_requires
    check
    # RELEASED = VERSION: the API check's baseline is now this release.
    awk '/^[^#]/ && NF >= 3 { $3 = $2 } { print }' versions.txt > versions.txt.new
    # keep the columns aligned as they were
    awk '/^[^#]/ && NF >= 3 { printf "%-17s %-7s %s\n", $1, $2, $3; next } { print }' versions.txt.new > versions.txt
    rm versions.txt.new
    if [[ -n "$(git status --porcelain)" ]]; then
      git commit -qam "Release: $(printf '%s ' "${versions[@]}" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
    fi
    tags=()
    for i in "${!folders[@]}"; do
      tag=${versions[$i]}
      [[ "${folders[$i]}" != . ]] && tag="${folders[$i]}/${versions[$i]}"
      git tag -a -m "${paths[$i]} ${versions[$i]}" "$tag"
      tags+=("$tag")
    done
    echo "release: tagged ${tags[*]}"
    echo "push with: git push origin HEAD ${tags[*]}"
    ;;
  *) echo "usage: bash scripts/release.sh [--set|--check]"; exit 2 ;;
esac
