#!/usr/bin/env bash
# Runs the built-in embedder's kernel tests as an arm64 binary under
# qemu-user-static (scripts/setup.sh installs it), so the NEON micro-kernel
# is checked on every machine: against the pure Go kernel on random shapes,
# against the float64 product, and end to end on the TF.js golden vectors,
# which also checks the pure Go path on arm64. The index's int8 dot-product
# kernel (index/quant) and the e5 encoder's kernels (internal/simd) are
# checked the same way, against their Go references. Emulation checks correctness
# only: its timings say nothing about an arm64 CPU's speed. On an arm64 host
# `go test` runs these tests natively and this script does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -m)" in
  aarch64 | arm64) echo "test-arm64: arm64 host, the package's own tests run natively"; exit 0 ;;
esac
command -v qemu-aarch64-static >/dev/null || { echo "test-arm64: qemu-aarch64-static not found: run scripts/setup.sh (Debian: apt-get install qemu-user-static)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/uselite.test" ./llm/uselite/
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/quant.test" ./index/quant/
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/simd.test" ./internal/simd/
# The e5 encoder's Q4×Q8 kernels (NEON with the dot-product extension, and
# the Go kernel) against the float64 product and each other.
qemu-aarch64-static -cpu max "$bin/simd.test" -test.v -test.count=1 -test.timeout=10m
# The encoder end to end on those kernels and the Go fp32 ones, on the
# tests' tiny generated model (the real one is too slow to run emulated).
CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin/e5.test" ./llm/e5/
qemu-aarch64-static -cpu max "$bin/e5.test" -test.v -test.count=1 -test.timeout=10m \
  -test.run='^(TestTinyModel|TestWindowsWeighted|TestTinyTokenizer|TestDecodeRuneLikeE5C|TestParseErrors)$'
qemu-aarch64-static "$bin/quant.test" -test.v -test.count=1 -test.timeout=10m \
  -test.run='^(TestNEONKernel|TestDotsMatchGo|TestDotsGo|TestQuantize|TestQuantizedCosine)$'
# The test binary reads testdata/ relative to its package, as go test runs it.
cd llm/uselite
qemu-aarch64-static "$bin/uselite.test" -test.v -test.count=1 -test.timeout=10m \
  -test.run='^(TestNEONFirst|TestKernels|TestKernelsMatchGo|TestGolden)$'
