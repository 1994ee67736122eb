// Package simd holds the kernels of vaultask's built-in models, in Go
// assembly where the CPU has them and in portable Go everywhere: today those
// of the multilingual-e5-small encoder (llm/e5): the Q4_0×Q8_0 matrix
// product and the activations' quantization, and the fp32 attention (a
// query's scores, softmax, the weighted sum of values) and GELU.
//
// A kernel is picked once at start-up from the CPU's features (for the
// product AVX-512 VNNI or AVX2 on amd64, NEON with the dot-product extension
// on arm64; for the rest AVX2 with FMA; Go elsewhere); every path is tested
// against the Go reference, or a float64 one, on random inputs. Files are named by kernel (q4q8.go, q4q8_amd64.s, …) so that other
// kernels can join without touching these.
//
// It is a leaf: it imports nothing of this module, only the standard library
// and golang.org/x/sys/cpu.
package simd
