#include "textflag.h"

// The Q4×Q8 kernels (see q4q8.go for the packed layouts): for one group of
// sixteen weight rows and tiles of eight activation rows,
//   y[8t+i][r] = bias[r] + Σ_b dw[b][r]·da[b][i]·(⟨w[b][r], q[b][i]⟩ − 8·Σq[b][i])
// where a vector lane is a weight row and the four activation bytes a lane
// multiplies are broadcast from memory.

// func q4q8VNNI(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
//
// Per block, Z0–Z7 hold the weights of k-groups 0–7 (four weights of each
// of the 16 rows per lane, nibbles unpacked to bytes) and Z8 the rows'
// scales. For each of the eight activation rows, Z12 starts at the row's
// offset −8·Σq, VPDPBUSD adds the eight k-groups' products (unsigned
// weight bytes × signed activation bytes, the instruction's own form), and
// the integer sum, converted, times dw·da goes into the row's accumulator
// Z20–Z27.
//
// Registers: DI the group's weights, R11 the current weight block, SI the
// current activation block, DX blocks per row, BX blocks left, CX tiles
// left, R8 the output row, R9 ldy in bytes, Z9 the nibble mask, Z30 the
// bias.

// VROW is one activation row's block: q at Q(SI), its scale at D(SI), its
// offset at O(SI), its accumulator ACC.
#define VROW(Q, D, O, ACC) \
	VPBROADCASTD  O(SI), Z12; \
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

// VUNPACK splits the packed vector at OFF(R11) into the weight bytes of
// k-groups LO (low nibbles) and HI (high nibbles).
#define VUNPACK(OFF, LO, HI) \
	VMOVDQU32 OFF(R11), Z10; \
	VPSRLW    $4, Z10, HI; \
	VPANDD    Z9, Z10, LO; \
	VPANDD    Z9, HI, HI

// VSTORE writes one output row: ACC plus the bias.
#define VSTORE(ACC) \
	VADDPS  Z30, ACC, ACC; \
	VMOVUPS ACC, (R8); \
	ADDQ    R9, R8

TEXT ·q4q8VNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ nb+16(FP), DX
	MOVQ tiles+24(FP), CX
	MOVQ y+32(FP), R8
	MOVQ ldy+40(FP), R9
	MOVQ bias+48(FP), R10
	SHLQ $2, R9
	MOVL $0x0f0f0f0f, AX
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
	VUNPACK(0, Z0, Z4)
	VUNPACK(64, Z1, Z5)
	VUNPACK(128, Z2, Z6)
	VUNPACK(192, Z3, Z7)
	VMOVUPS 256(R11), Z8
	VROW(0, 256, 288, Z20)
	VROW(32, 260, 292, Z21)
	VROW(64, 264, 296, Z22)
	VROW(96, 268, 300, Z23)
	VROW(128, 272, 304, Z24)
	VROW(160, 276, 308, Z25)
	VROW(192, 280, 312, Z26)
	VROW(224, 284, 316, Z27)
	ADDQ    $320, R11
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

// func q4q8AVX2(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
//
// Eight rows a vector, so the group is done in two halves of eight rows
// (bytes 32h… of each packed vector and of the scales), and with sixteen
// registers two activation rows at a time. Per block, Y0–Y7 hold the
// unpacked weights of k-groups 0–7 and Y10 the scales; for each of the two
// rows, VPMADDUBSW multiplies the weight bytes (unsigned) by the broadcast
// activation bytes (signed) into int16 pairs (at most 2·15·128 each, so the
// eight k-groups' sum, at most 30720, cannot overflow int16), VPMADDWD by
// ones widens to int32, the offset is added, and the converted sum times
// dw·da goes into the row's accumulator Y11 or Y12.
//
// Registers: DI the half's weights, R11 the current weight block, SI the
// tile's activations, R12 the current activation block, R13 8 × the pair's
// index (its rows' bytes are 64·pair into a block, their scales and
// offsets 8·pair), DX blocks per row, BX blocks left, CX tiles left, R14
// the half's first output row of the tile, R8 the output row, R9 ldy in
// bytes, R10 the half's bias, AX the halves left, Y8 the nibble mask, Y9
// int16 ones.

// AK adds the products of k-group K (weights in W) for the activation
// bytes at Q+4K(R12) to the int16 sums in Y15.
#define AK(QK, W) \
	VPBROADCASTD QK(R12)(R13*8), Y13; \
	VPMADDUBSW   Y13, W, Y14; \
	VPADDW       Y14, Y15, Y15

// AROW is one activation row's block of the pair: its bytes at Q, scale at
// D and offset at O from the pair's place in the block, accumulator ACC.
#define AROW(Q, D, O, ACC) \
	VPBROADCASTD Q+0(R12)(R13*8), Y13; \
	VPMADDUBSW   Y13, Y0, Y15; \
	AK(Q+4, Y1); \
	AK(Q+8, Y2); \
	AK(Q+12, Y3); \
	AK(Q+16, Y4); \
	AK(Q+20, Y5); \
	AK(Q+24, Y6); \
	AK(Q+28, Y7); \
	VPMADDWD     Y9, Y15, Y15; \
	VPBROADCASTD O(R12)(R13*1), Y13; \
	VPADDD       Y13, Y15, Y15; \
	VCVTDQ2PS    Y15, Y15; \
	VBROADCASTSS D(R12)(R13*1), Y13; \
	VMULPS       Y10, Y13, Y13; \
	VFMADD231PS  Y15, Y13, ACC

#define AUNPACK(OFF, LO, HI) \
	VMOVDQU OFF(R11), Y13; \
	VPSRLW  $4, Y13, HI; \
	VPAND   Y8, Y13, LO; \
	VPAND   Y8, HI, HI

TEXT ·q4q8AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), DI
	MOVQ nb+16(FP), DX
	MOVQ ldy+40(FP), R9
	MOVQ bias+48(FP), R10
	SHLQ $2, R9
	MOVL $0x0f0f0f0f, AX
	MOVQ AX, X8
	VPBROADCASTD X8, Y8
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
	AUNPACK(0, Y0, Y4)
	AUNPACK(64, Y1, Y5)
	AUNPACK(128, Y2, Y6)
	AUNPACK(192, Y3, Y7)
	VMOVUPS 256(R11), Y10
	AROW(0, 256, 288, Y11)
	AROW(32, 260, 292, Y12)
	ADDQ    $320, R11
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

// The order that puts VPACKSSDW-then-VPACKSSWB's bytes back in sequence:
// the packs interleave their operands per 128-bit lane, leaving the four
// vectors' first halves in dwords 0–3 and their second halves in 4–7.
DATA packOrder<>+0(SB)/4, $0
DATA packOrder<>+4(SB)/4, $4
DATA packOrder<>+8(SB)/4, $1
DATA packOrder<>+12(SB)/4, $5
DATA packOrder<>+16(SB)/4, $2
DATA packOrder<>+20(SB)/4, $6
DATA packOrder<>+24(SB)/4, $3
DATA packOrder<>+28(SB)/4, $7
GLOBL packOrder<>(SB), RODATA|NOPTR, $32

DATA absMask<>+0(SB)/4, $0x7fffffff
GLOBL absMask<>(SB), RODATA|NOPTR, $4

DATA f127<>+0(SB)/4, $0x42fe0000
DATA one<>+0(SB)/4, $0x3f800000
GLOBL f127<>(SB), RODATA|NOPTR, $4
GLOBL one<>(SB), RODATA|NOPTR, $4

// func quantizeAVX2(x *float32, nb int, q *byte, d *float32)
//
// Quantizes nb blocks of 32 values at x as Q8.quantizeRow does, with the
// same float32 operations in the same order (so the same bytes): the
// block's max |x| (Y5), its scale d = max/127 and 1/d (0 for an all-zero
// block), the values times 1/d rounded to even (VCVTPS2DQ in the default
// rounding mode) and packed with saturation to bytes, and −8·Σq. The
// block's bytes go to q, its scale to d and its offset to d+32, then all
// three move 320 bytes on, to the row's next block.
TEXT ·quantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         q+16(FP), DI
	MOVQ         d+24(FP), DX
	VBROADCASTSS absMask<>(SB), Y6
	VMOVDQU      packOrder<>(SB), Y7

qblock:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y6, Y0, Y4
	VANDPS  Y6, Y1, Y5
	VMAXPS  Y5, Y4, Y4
	VANDPS  Y6, Y2, Y5
	VMAXPS  Y5, Y4, Y4
	VANDPS  Y6, Y3, Y5
	VMAXPS  Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS  X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXPS  X5, X4, X4
	VDIVSS  f127<>(SB), X4, X4
	VMOVSS  X4, (DX)
	VXORPS  X5, X5, X5
	VUCOMISS X5, X4
	JEQ     qzero
	VMOVSS  one<>(SB), X5
	VDIVSS  X4, X5, X5

qzero:
	VBROADCASTSS X5, Y5
	VMULPS    Y5, Y0, Y0
	VMULPS    Y5, Y1, Y1
	VMULPS    Y5, Y2, Y2
	VMULPS    Y5, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPADDD    Y1, Y0, Y4
	VPADDD    Y2, Y4, Y4
	VPADDD    Y3, Y4, Y4
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y7, Y0
	VMOVDQU   Y0, (DI)
	VEXTRACTI128 $1, Y4, X5
	VPADDD    X5, X4, X4
	VPSHUFD   $0x4e, X4, X5
	VPADDD    X5, X4, X4
	VPSHUFD   $0xb1, X4, X5
	VPADDD    X5, X4, X4
	VMOVD     X4, AX
	IMULL     $-8, AX
	MOVL      AX, 32(DX)
	ADDQ      $128, SI
	ADDQ      $320, DI
	ADDQ      $320, DX
	DECQ      CX
	JNZ       qblock
	VZEROUPPER
	RET
