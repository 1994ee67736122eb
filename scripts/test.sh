#!/usr/bin/env bash
# Runs every test with the race detector, after installing what the tests
# need. Extra arguments go to `go test` (e.g. -run TestApply ./index/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ $# -eq 0 ]; then set -- ./...; fi
go test -race -tags sqlite_fts5 -count=1 -timeout 15m "$@"
