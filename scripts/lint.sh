#!/usr/bin/env bash
# gofmt, go vet and staticcheck with the project's build tags.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$out" ]; then echo "gofmt needed:"; echo "$out"; exit 1; fi
go vet -tags sqlite_fts5 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags sqlite_fts5 ./...
