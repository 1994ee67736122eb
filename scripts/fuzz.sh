#!/usr/bin/env bash
# Runs every Fuzz target in the module for the given time each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-20s}
for pkg in $(go list -tags sqlite_fts5 ./...); do
  dir=$(go list -tags sqlite_fts5 -f '{{.Dir}}' "$pkg")
  # A package without fuzz targets makes grep exit 1, which pipefail would
  # turn into the end of the whole run.
  { grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null || true; } | sed 's/^func //' | while read -r target; do
    echo "== $pkg $target"
    go test -tags sqlite_fts5 -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" </dev/null
  done
done
