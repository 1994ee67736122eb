#!/usr/bin/env bash
# The demo: installs what is missing, starts a CouchDB-compatible server on
# loopback, loads the demo vault (demo/vault) into it in LiveSync's format,
# and runs `vaultask serve` following it live, with the built-in embedder and
# no API keys. Prints the /chat, OpenAI and MCP URLs; Ctrl-C stops it all.
# Flags go to `vaultask-dev demo` (-listen, -couch-port, -dir; -h lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "demo: building bin/vaultask and bin/vaultask-dev"
bash scripts/build-release.sh bin/vaultask
go build -o bin/vaultask-dev ./devtools/cmd/vaultask-dev
exec bin/vaultask-dev demo "$@"
