// Package simd holds the vector kernels the index and the built-in encoders
// share, each in Go assembly with a portable Go reference it is tested
// against, and no cgo:
//
//   - quant.go, dots_*: int8 vectors. Quantize maps a float32 vector to int8
//     with one scale per vector; Dots takes the int32 dot products of one
//     quantised query with many quantised rows (AVX2 on amd64, NEON on
//     arm64). The index's in-memory vector set (index/vectorset) scans its
//     int8 copies of the vectors with it.
//   - gemm_*: fp32 matrix products on register-blocked micro-kernels
//     (AVX-512 or AVX2+FMA on amd64, picked at start-up; NEON on arm64; Go
//     elsewhere): Kernels, and Kernel's PackRows, PackCols and Gemm, which
//     the built-in embedder's forward pass (llm/uselite) runs on.
//
// It is a leaf: it imports nothing from this module, so both index and llm
// may import it. Its arm64 kernels are tested under qemu-user-static
// (scripts/test-arm64.sh) and vetted for arm64 (scripts/lint.sh).
package simd
