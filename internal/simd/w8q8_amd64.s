#include "textflag.h"

// The W8×Q8 kernels (see w8q8.go and q4q8.go for the packed layouts): for
// one group of sixteen weight rows and tiles of eight activation rows,
//   y[8t+i][r] = bias[r] + Σ_b dw[b][r]·da[b][i]·⟨w[b][r], q[b][i]⟩
// where a vector lane is a weight row and the four activation bytes a lane
// multiplies are broadcast from memory, as in q4q8_amd64.s.

// func w8q8VNNI(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
//
// VPDPBUSD multiplies unsigned by signed bytes, so per block Z0–Z7 hold the
// weights of k-groups 0–7 plus 128 (the top bit flipped: 1…255) and Z8 the
// rows' scales. For each of the eight activation rows, Z12 starts at
// −128·Σq (the row's offset −8·Σq shifted left by 4), which takes the
// added 128s away again, VPDPBUSD adds the eight k-groups' products
// (|sum| < 32·255·128, far inside int32), and the integer sum, converted,
// times dw·da goes into the row's accumulator Z20–Z27.
//
// Registers: DI the group's weights, R11 the current weight block, SI the
// current activation block, DX blocks per row, BX blocks left, CX tiles
// left, R8 the output row, R9 ldy in bytes, Z9 0x80 bytes, Z30 the bias.

// VROW is one activation row's block: q at Q(SI), its scale at D(SI), its
// offset at O(SI), its accumulator ACC.
#define VROW(Q, D, O, ACC) \
	VPBROADCASTD  O(SI), Z12; \
	VPSLLD        $4, Z12, Z12; \
	VPDPBUSD.BCST Q+0(SI), Z0, Z12; \
	VPDPBUSD.BCST Q+4(SI), Z1, Z12; \
	VPDPBUSD.BCST Q+8(SI), Z2, Z12; \
	VPDPBUSD.BCST Q+12(SI), Z3, Z12; \
	VPDPBUSD.BCST Q+16(SI), Z4, Z12; \
	VPDPBUSD.BCST Q+20(SI), Z5, Z12; \
	VPDPBUSD.BCST Q+24(SI), Z6, Z12; \
	VPDPBUSD.BCST Q+28(SI), Z7, Z12; \
	VCVTDQ2PS     Z12, Z12; \
	VMULPS.BCST   D(SI), Z8, Z13; \
	VFMADD231PS   Z12, Z13, ACC

// VSTORE writes one output row: ACC plus the bias.
#define VSTORE(ACC) \
	VADDPS  Z30, ACC, ACC; \
	VMOVUPS ACC, (R8); \
	ADDQ    R9, R8

TEXT ·w8q8VNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ nb+16(FP), DX
	MOVQ tiles+24(FP), CX
	MOVQ y+32(FP), R8
	MOVQ ldy+40(FP), R9
	MOVQ bias+48(FP), R10
	SHLQ $2, R9
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z9
	VMOVUPS (R10), Z30

vtile:
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	MOVQ   DI, R11
	MOVQ   DX, BX

vblock:
	VPXORD  0(R11), Z9, Z0
	VPXORD  64(R11), Z9, Z1
	VPXORD  128(R11), Z9, Z2
	VPXORD  192(R11), Z9, Z3
	VPXORD  256(R11), Z9, Z4
	VPXORD  320(R11), Z9, Z5
	VPXORD  384(R11), Z9, Z6
	VPXORD  448(R11), Z9, Z7
	VMOVUPS 512(R11), Z8
	VROW(0, 256, 288, Z20)
	VROW(32, 260, 292, Z21)
	VROW(64, 264, 296, Z22)
	VROW(96, 268, 300, Z23)
	VROW(128, 272, 304, Z24)
	VROW(160, 276, 308, Z25)
	VROW(192, 280, 312, Z26)
	VROW(224, 284, 316, Z27)
	ADDQ    $576, R11
	ADDQ    $320, SI
	DECQ    BX
	JNZ     vblock

	VSTORE(Z20)
	VSTORE(Z21)
	VSTORE(Z22)
	VSTORE(Z23)
	VSTORE(Z24)
	VSTORE(Z25)
	VSTORE(Z26)
	VSTORE(Z27)
	DECQ CX
	JNZ  vtile

	VZEROUPPER
	RET

// func w8q8AVX2(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
//
// Eight rows a vector, so the group is done in two halves of eight rows
// (bytes 32h… of each packed vector and of the scales), two activation
// rows at a time, as q4q8AVX2 does. VPMADDUBSW multiplies unsigned by
// signed bytes into int16 pairs: per block Y0–Y7 hold |w| of k-groups 0–7
// (at most 127), and for each k-group of an activation row VPSIGNB gives
// the broadcast activation bytes w's signs (exact: no q is −128), so each
// pair is at most 2·127·128 in magnitude; two k-groups' pairs could
// overflow int16, so VPMADDWD by ones widens each to int32 before the sum.
// The converted sum times dw·da goes into the row's accumulator Y11 or Y12.
//
// Registers: DI the half's weights, R11 the current weight block, SI the
// tile's activations, R12 the current activation block, R13 8 × the pair's
// index (its rows' bytes are 64·pair into a block, their scales 8·pair),
// DX blocks per row, BX blocks left, CX tiles left, R14 the half's first
// output row of the tile, R8 the output row, R9 ldy in bytes, R10 the
// half's bias, AX the halves left, Y9 int16 ones, Y10 the scales.

// AK adds the products of k-group K (|w| in W, w at WOFF(R11)) with the
// activation bytes at QK(R12) to the int32 sums in Y15.
#define AK(QK, W, WOFF) \
	VPBROADCASTD QK(R12)(R13*8), Y13; \
	VPSIGNB      WOFF(R11), Y13, Y13; \
	VPMADDUBSW   Y13, W, Y14; \
	VPMADDWD     Y9, Y14, Y14; \
	VPADDD       Y14, Y15, Y15

// AROW is one activation row's block of the pair: its bytes at Q and scale
// at D from the pair's place in the block, accumulator ACC.
#define AROW(Q, D, ACC) \
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

TEXT ·w8q8AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ nb+16(FP), DX
	MOVQ ldy+40(FP), R9
	MOVQ bias+48(FP), R10
	SHLQ $2, R9
	MOVL $0x00010001, AX
	MOVQ AX, X9
	VPBROADCASTD X9, Y9
	MOVQ $2, AX

ahalf:
	MOVQ a+8(FP), SI
	MOVQ tiles+24(FP), CX
	MOVQ y+32(FP), R14

atile:
	XORQ R13, R13
	MOVQ R14, R8

apair:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	MOVQ   DI, R11
	MOVQ   SI, R12
	MOVQ   DX, BX

ablock:
	VPABSB  0(R11), Y0
	VPABSB  64(R11), Y1
	VPABSB  128(R11), Y2
	VPABSB  192(R11), Y3
	VPABSB  256(R11), Y4
	VPABSB  320(R11), Y5
	VPABSB  384(R11), Y6
	VPABSB  448(R11), Y7
	VMOVUPS 512(R11), Y10
	AROW(0, 256, Y11)
	AROW(32, 260, Y12)
	ADDQ    $576, R11
	ADDQ    $320, R12
	DECQ    BX
	JNZ     ablock

	VADDPS  (R10), Y11, Y11
	VMOVUPS Y11, (R8)
	ADDQ    R9, R8
	VADDPS  (R10), Y12, Y12
	VMOVUPS Y12, (R8)
	ADDQ    R9, R8
	ADDQ    $8, R13
	CMPQ    R13, $32
	JB      apair

	// The next tile: past this tile's nb blocks, eight rows further down.
	MOVQ  DX, BX
	IMULQ $320, BX
	ADDQ  BX, SI
	MOVQ  R9, BX
	SHLQ  $3, BX
	ADDQ  BX, R14
	DECQ  CX
	JNZ   atile

	// The second half: rows 8–15, at byte 32 of the packed vectors, the
	// scales and the bias, and 8 floats into the output rows.
	ADDQ $32, DI
	ADDQ $32, R10
	MOVQ y+32(FP), R14
	ADDQ $32, R14
	MOVQ R14, y+32(FP)
	DECQ AX
	JNZ  ahalf

	VZEROUPPER
	RET
