#!/usr/bin/env bash
# The release build of vaultask, the one recipe the Dockerfile, `make build`
# and scripts/container-check.sh share: cgo (SQLite, sqlite-vec, the
# built-in embedder's kernels), the sqlite_fts5 tag, no local paths in the
# binary, no symbol tables, the version stamped in.
#
# Usage: scripts/build-release.sh OUT [VERSION]
# VERSION defaults to `git describe --tags --always --dirty`, else "dev".
# GOOS/GOARCH pass through (a cross build also needs a C cross compiler in CC).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-release.sh OUT [VERSION]}
version=${2:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
CGO_ENABLED=1 go build -tags sqlite_fts5 -trimpath -buildvcs=false \
	-ldflags "-s -w -X main.version=${version}" -o "$out" ./cmd/vaultask
