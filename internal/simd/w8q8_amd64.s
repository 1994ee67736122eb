#include "textflag.h"
#include "q8_amd64.h"

// The W8×Q8 kernels: q8_amd64.h's loops, the weights int8 (see w8q8.go
// for how each kernel multiplies signed bytes by signed bytes):
//   y[8t+i][r] = bias[r] + Σ_b dw[b][r]·da[b][i]·⟨w[b][r], q[b][i]⟩

// W8VNNI loads a block's eight vectors of weights plus 128 (the top bit
// flipped by the 0x80 bytes in Z9: 1…255, as VPDPBUSD's unsigned operand)
// and the scales that follow.
#define W8VNNI \
	VPXORD  0(R11), Z9, Z0; \
	VPXORD  64(R11), Z9, Z1; \
	VPXORD  128(R11), Z9, Z2; \
	VPXORD  192(R11), Z9, Z3; \
	VPXORD  256(R11), Z9, Z4; \
	VPXORD  320(R11), Z9, Z5; \
	VPXORD  384(R11), Z9, Z6; \
	VPXORD  448(R11), Z9, Z7; \
	VMOVUPS 512(R11), Z8

// W8START starts a row's sum at −128·Σq, the row's offset −8·Σq shifted
// left by 4, which takes the added 128s away again (|sum| < 32·255·128,
// far inside int32).
#define W8START(O) \
	VPBROADCASTD O(SI), Z12; \
	VPSLLD       $4, Z12, Z12

// func w8q8VNNI(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·w8q8VNNI(SB), NOSPLIT, $0-56
	Q8VNNI(0x80808080, W8VNNI, W8START, 576)

// W8SETUP: the AVX2 kernel needs no constant of its own.
#define W8SETUP

// W8AVX2 loads |w| of k-groups 0–7 (at most 127), for VPMADDUBSW's
// unsigned operand, and the scales.
#define W8AVX2 \
	VPABSB  0(R11), Y0; \
	VPABSB  64(R11), Y1; \
	VPABSB  128(R11), Y2; \
	VPABSB  192(R11), Y3; \
	VPABSB  256(R11), Y4; \
	VPABSB  320(R11), Y5; \
	VPABSB  384(R11), Y6; \
	VPABSB  448(R11), Y7; \
	VMOVUPS 512(R11), Y10

// W8ROW: for each k-group, VPSIGNB gives the broadcast activation bytes
// w's signs (exact: no q is −128), so each of VPMADDUBSW's int16 pairs is
// at most 2·127·128 in magnitude; two k-groups' pairs could overflow
// int16, so VPMADDWD by ones widens each to int32 before the sum. There
// is no offset (O is unused).
#define W8ROW(Q, D, O, ACC) \
	VPBROADCASTD Q+0(R12)(R13*8), Y13; \
	VPSIGNB      0(R11), Y13, Y13; \
	VPMADDUBSW   Y13, Y0, Y14; \
	VPMADDWD     Y9, Y14, Y15; \
	AK(Q+4, Y1, 64); \
	AK(Q+8, Y2, 128); \
	AK(Q+12, Y3, 192); \
	AK(Q+16, Y4, 256); \
	AK(Q+20, Y5, 320); \
	AK(Q+24, Y6, 384); \
	AK(Q+28, Y7, 448); \
	VCVTDQ2PS    Y15, Y15; \
	VBROADCASTSS D(R12)(R13*1), Y13; \
	VMULPS       Y10, Y13, Y13; \
	VFMADD231PS  Y15, Y13, ACC

// AK adds the products of a k-group (|w| in W, w at WOFF(R11)) with the
// activation bytes at QK(R12) to the int32 sums in Y15.
#define AK(QK, W, WOFF) \
	VPBROADCASTD QK(R12)(R13*8), Y13; \
	VPSIGNB      WOFF(R11), Y13, Y13; \
	VPMADDUBSW   Y13, W, Y14; \
	VPMADDWD     Y9, Y14, Y14; \
	VPADDD       Y14, Y15, Y15

// func w8q8AVX2(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·w8q8AVX2(SB), NOSPLIT, $0-56
	Q8AVX2(W8SETUP, W8AVX2, W8ROW, 576)
