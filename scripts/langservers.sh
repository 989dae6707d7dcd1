#!/usr/bin/env bash
# langservers: installs the language servers the tests of internal/lsp and
# codetools' diagnostics and navigation tools run against, pinned, outside
# the repository in a cached folder (reused when present), and prints, on
# stdout, the environment that tells the tests where they are:
#
#   eval "$(bash scripts/langservers.sh)"
#
#   LLMTOOLKIT_GOPLS                       gopls (go install golang.org/x/tools/gopls@$gopls_version)
#   LLMTOOLKIT_PYRIGHT                     pyright-langserver (npm pyright@$pyright_version)
#   LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER  typescript-language-server (npm, with typescript)
#
# The folder is $LLMTOOLKIT_LANGSERVERS_DIR (default under /tmp). Progress
# goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

gopls_version=v0.23.0
pyright_version=1.1.414
tsls_version=5.1.3 # 6.x needs Node 22.22; 5.1 runs on Node 20
typescript_version=5.9.3
dir="${LLMTOOLKIT_LANGSERVERS_DIR:-/tmp/llmtoolkit-langservers}"
mkdir -p "$dir/gobin" "$dir/npm"

gopls="$dir/gobin/gopls"
if [ ! -x "$gopls" ] || ! "$gopls" version 2>/dev/null | grep -q "$gopls_version"; then
  echo "== installing gopls@$gopls_version into $dir/gobin" >&2
  GOBIN="$dir/gobin" GOFLAGS=-mod=mod GOWORK=off go install "golang.org/x/tools/gopls@$gopls_version" >&2
fi

if ! command -v npm >/dev/null; then
  apt-get update -qq >&2 && apt-get install -y -qq npm >&2
fi
want="pyright@$pyright_version typescript-language-server@$tsls_version typescript@$typescript_version"
if [ "$(cat "$dir/npm/.installed" 2>/dev/null)" != "$want" ]; then
  echo "== installing $want into $dir/npm" >&2
  [ -f "$dir/npm/package.json" ] || echo '{"private":true}' >"$dir/npm/package.json"
  # shellcheck disable=SC2086
  npm install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error $want >&2
  echo "$want" >"$dir/npm/.installed"
fi

echo "LLMTOOLKIT_GOPLS=$gopls"
echo "LLMTOOLKIT_PYRIGHT=$dir/npm/node_modules/.bin/pyright-langserver"
echo "LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER=$dir/npm/node_modules/.bin/typescript-language-server"
echo "export LLMTOOLKIT_GOPLS LLMTOOLKIT_PYRIGHT LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER"
