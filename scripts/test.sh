#!/usr/bin/env bash
# Runs every test with the race detector, after installing what the tests
# need, then the built-in embedder's arm64 kernel tests under qemu
# (scripts/test-arm64.sh), then checks the release binary as the container
# runs it (scripts/container-check.sh). Extra arguments go to `go test`
# instead (e.g. -run TestApply ./index/), without the arm64 tests and the
# container check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# setup.sh fetched the models, so a test that needs them fails instead of
# skipping when they are missing; and the LiveSync corpus dumps are beside
# the repository (../shared/corpus, or VAULTASK_CORPUS_DIR) wherever the
# project's tests run, so a test that reads them fails without them too.
export VAULTASK_REQUIRE_MODELS=1
export VAULTASK_REQUIRE_CORPUS=1
if [ $# -gt 0 ]; then
  exec go test -race -tags sqlite_fts5 -count=1 -timeout 15m "$@"
fi
go test -race -tags sqlite_fts5 -count=1 -timeout 15m ./...
bash scripts/test-arm64.sh
bash scripts/container-check.sh
