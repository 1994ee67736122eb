#!/usr/bin/env bash
# gofmt, go vet and staticcheck with the project's build tags; shellcheck on
# the scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
if [ -n "$out" ]; then echo "gofmt needed:"; echo "$out"; exit 1; fi
go vet -tags sqlite_fts5 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags sqlite_fts5 ./...
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck
