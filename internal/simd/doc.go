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
//   - q4q8*, f32*, attention and softmax/GELU: the multilingual-e5-small
//     encoder's (llm/e5) Q4_0×Q8_0 matrix product and activation
//     quantization (AVX-512 VNNI or AVX2 on amd64, NEON with the
//     dot-product extension on arm64, Go elsewhere) and its fp32 attention
//     (a query's scores, softmax, the weighted sum of values) and GELU (AVX2
//     with FMA, Go elsewhere).
//   - w8q8*: int8 weights (W8: per 32 weights of a row one float32 scale,
//     QuantizeW8 from fp32) times the same Q8 activations, MatMulW8Q8, for
//     encoders that 4-bit weights cost too much accuracy (bge-small-en-v1.5).
//
// A kernel is picked once at start-up from the CPU's features. It is a
// leaf: it imports nothing from this module, only the standard library and
// golang.org/x/sys/cpu, so both index and llm may import it. Its arm64
// kernels are tested under qemu-user-static (scripts/test-arm64.sh) and
// vetted for arm64 (scripts/lint.sh).
package simd
