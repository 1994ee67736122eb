// Package quant holds vectors quantised to int8 and the kernels that scan
// them: Quantize maps a float32 vector to int8 with one scale per vector, and
// Dots takes the int32 dot products of one quantised query with many
// quantised rows, on an AVX2 kernel on amd64, a NEON kernel on arm64, and
// portable Go elsewhere (or when the dimension is not a multiple of the
// kernel's width). The index keeps its vectors' int8 copies in memory and
// scans them with Dots to pick the candidates it rescores exactly.
//
// It imports nothing from this module and uses no cgo, so its arm64 kernel
// is tested under qemu-user-static (scripts/test-arm64.sh).
package quant
