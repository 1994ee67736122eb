// Package simd holds the vector kernels the index and the built-in encoders
// share, each in Go assembly where the CPU has them, with a portable Go
// reference it is tested against (or a float64 one, on random inputs of
// every edge shape), and no cgo:
//
//   - quant.go, dots_*: int8 vectors. Quantize maps a float32 vector to int8
//     with one scale per vector; Dots takes the int32 dot products of one
//     quantised query with many quantised rows (AVX2 on amd64, NEON on
//     arm64). The index's in-memory vector set (index/vectorset) scans its
//     int8 copies of the vectors with it.
//   - gemm_*: fp32 matrix products on register-blocked micro-kernels
//     (AVX-512 or AVX2+FMA on amd64, picked at start-up; NEON on arm64; Go
//     elsewhere): Kernels, and Kernel's PackRows, PackCols and Gemm, which
//     USE-lite's forward pass (llm/uselite) runs on.
//   - q8*, q4q8*, w8q8*: the BERT encoders' quantized matrix products,
//     weights quantized per 32 along a row times activations quantized
//     to int8 the same way (Q8, QuantizeRows; AVX2 on amd64). One family of
//     kernels (AVX-512 VNNI or AVX2 on amd64, NEON with the dot-product
//     extension on arm64, Go elsewhere) serves two weight formats: Q4_0
//     (PackQ4, MatMulQ4Q8: multilingual-e5-small, llm/e5) and int8 with
//     a float32 scale per 32 (QuantizeW8, MatMulW8Q8: bge-small-en-v1.5,
//     to which 4-bit weights cost too much accuracy). The loops are
//     written once, the Go kernel in q8.go and each CPU's in q8_amd64.h
//     and q8_arm64.h; a format (wFormat, and the macros its .s files pass
//     in) says only how a block's weights are read.
//   - f32*, attention_amd64.s, softmax_gelu_amd64.s, mathf.go: e5's fp32
//     attention (a query's scores, softmax, the weighted sum of values, for
//     one query or two at once) and GELU (AVX2 with FMA, Go elsewhere).
//
// neon_arm64.h encodes the NEON instructions Go's assembler lacks, for
// every arm64 kernel. A kernel is picked once at start-up from the CPU's
// features. It is a leaf: it imports nothing from this module, only the
// standard library and golang.org/x/sys/cpu, so both index and llm may
// import it. Its arm64 kernels are tested under qemu-user-static
// (scripts/test-arm64.sh) and vetted for arm64 (scripts/lint.sh).
package simd
