#!/usr/bin/env bash
# gofmt, go vet and staticcheck with the project's build tags (go vet for
# arm64 too, on the NEON assembly); shellcheck on the scripts; the
# Dockerfile (dockerfile-utils, as hadolint is in neither Debian nor npm) and
# the compose file (docker-compose config).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
if [ -n "$out" ]; then echo "gofmt needed:"; echo "$out"; exit 1; fi
go vet -tags sqlite_fts5 ./...
# The NEON kernels (internal/simd: the embedders' and the index's int8 scan;
# the encoders that call them): asmdecl checks their frames against the Go
# declarations.
GOARCH=arm64 go vet ./internal/simd/ ./llm/uselite/ ./llm/e5/ ./llm/bge/ ./llm/internal/bert/
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags sqlite_fts5 ./...
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck
tests/clients/node_modules/.bin/dockerfile-utils lint Dockerfile
# The compose file with the example settings, away from any real deploy/.env.
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
mkdir "$check/deploy"
cp deploy/compose.yaml "$check/deploy/compose.yaml"
cp deploy/.env.example "$check/deploy/.env"
(cd "$check/deploy" && docker-compose -f compose.yaml config -q)
