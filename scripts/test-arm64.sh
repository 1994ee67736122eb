#!/usr/bin/env bash
# Runs the SIMD kernels' tests as arm64 binaries under qemu-user-static
# (scripts/setup.sh installs it), so the NEON kernels are checked on every
# machine: internal/simd's fp32 micro-kernel against the pure Go kernel on
# random shapes and against the float64 product, its int8 dot-product
# kernel against its Go reference, and the BERT encoders' Q4×Q8 (e5) and
# W8×Q8 (bge) kernels (NEON with the dot-product extension, and the Go
# kernel) against the float64 product; then the built-in embedders end to
# end: USE-lite on the TF.js golden vectors (which also checks the pure Go
# path on arm64), the shared BERT encoder (llm/internal/bert) and e5 on
# their tests' tiny generated models (the real ones are too slow emulated).
# Emulation checks correctness only: its timings say nothing about an arm64
# CPU's speed. On an arm64 host `go test` runs these tests natively and this
# script does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -m)" in
  aarch64 | arm64) echo "test-arm64: arm64 host, the package's own tests run natively"; exit 0 ;;
esac
command -v qemu-aarch64-static >/dev/null || { echo "test-arm64: qemu-aarch64-static not found: run scripts/setup.sh (Debian: apt-get install qemu-user-static)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/simd.test" ./internal/simd/
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/uselite.test" ./llm/uselite/
qemu-aarch64-static -cpu max "$bin/simd.test" -test.v -test.count=1 -test.timeout=10m
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/bert.test" ./llm/internal/bert/
qemu-aarch64-static -cpu max "$bin/bert.test" -test.v -test.count=1 -test.timeout=10m
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/e5.test" ./llm/e5/
qemu-aarch64-static -cpu max "$bin/e5.test" -test.v -test.count=1 -test.timeout=10m \
  -test.run='^(TestTinyModel|TestTinyTokenizer|TestDecodeRuneLikeE5C|TestParseErrors)$'
# The test binary reads testdata/ relative to its package, as go test runs it.
cd llm/uselite
qemu-aarch64-static "$bin/uselite.test" -test.v -test.count=1 -test.timeout=10m \
  -test.run='^(TestGolden)$'
