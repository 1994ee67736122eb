//go:build !amd64 && !arm64

package simd

// dotsWidth is unused without a kernel.
const dotsWidth = 1

// dots is nil: Dots runs dotsGo.
var dots func(q, rows []int8, out []int32)
