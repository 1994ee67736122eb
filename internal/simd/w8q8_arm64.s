#include "textflag.h"

// The W8×Q8 kernel with NEON's SDOT (see w8q8.go and q4q8.go for the
// layouts, q4q8_arm64.s for the loops and the hand-encoded instructions):
// SDOT multiplies signed bytes by signed bytes, so the int8 weights need no
// offset. A 128-bit vector holds four weight rows, four bytes a lane, and
// SDOT by element multiplies them by one four-byte group of the activation
// row's bytes (V16: k-groups 0–3, V17: 4–7), so a block's integer sum for
// four rows is eight SDOTs. The loops run over the tile's eight activation
// rows, the group's four quarters of four weight rows, then the blocks.
#define SDOT(m, idx, n, d) WORD $(0x4f80e000 | ((idx)&1)<<21 | ((idx)>>1)<<11 | (m)<<16 | (n)<<5 | (d))
#define SCVTF4S(n, d) WORD $(0x4e21d800 | (n)<<5 | (d))
#define FMUL4S(m, n, d) WORD $(0x6e20dc00 | (m)<<16 | (n)<<5 | (d))
#define FMLA4S0(m, n, d) WORD $(0x4f801000 | (m)<<16 | (n)<<5 | (d))
#define FADD4S(m, n, d) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))

// KGROUP adds k-group 4·(A−16)+J (the quarter's weights in the packed
// vector at (R14), times bytes 4J… of VA) to V18, loading through VR
// (register number W), and moves R14 to the next packed vector.
#define KGROUP(A, J, VR, W) \
	VLD1.P (R14)(R15), [VR.B16]; \
	SDOT(A, J, W, 18)

// func w8q8NEONDot(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
//
// Registers: R0 the group's weights, R1 the tile's activations, R2 blocks
// per row, R3 tiles left, R4 the tile's first output row, R5 ldy in
// bytes, R6 the bias, R7 the activation row (0–7), R8 the quarter (0–3),
// R9 the block's weights for the quarter, R10 the row's activation bytes,
// R11 its scale, R12 blocks left, R14 the packed vector, R15 64, V20 the
// accumulator.
TEXT ·w8q8NEONDot(SB), NOSPLIT, $0-56
	MOVD w+0(FP), R0
	MOVD a+8(FP), R1
	MOVD nb+16(FP), R2
	MOVD tiles+24(FP), R3
	MOVD y+32(FP), R4
	MOVD ldy+40(FP), R5
	MOVD bias+48(FP), R6
	LSL  $2, R5
	MOVD $64, R15

tile:
	MOVD $0, R7

row:
	MOVD $0, R8

quarter:
	VEOR V20.B16, V20.B16, V20.B16
	ADD  R8<<4, R0, R9
	ADD  R7<<5, R1, R10
	ADD  R7<<2, R1, R11
	ADD  $256, R11
	MOVD R2, R12

block:
	VLD1   (R10), [V16.B16, V17.B16]
	VEOR   V18.B16, V18.B16, V18.B16
	MOVD   R9, R14
	KGROUP(16, 0, V0, 0)
	KGROUP(16, 1, V1, 1)
	KGROUP(16, 2, V0, 0)
	KGROUP(16, 3, V1, 1)
	KGROUP(17, 0, V0, 0)
	KGROUP(17, 1, V1, 1)
	KGROUP(17, 2, V0, 0)
	KGROUP(17, 3, V1, 1)
	SCVTF4S(18, 18)
	ADD    $512, R9, R14
	VLD1   (R14), [V21.S4]
	FMUL4S(21, 18, 18)
	FMOVS  (R11), F22
	FMLA4S0(22, 18, 20)
	ADD    $576, R9
	ADD    $320, R10
	ADD    $320, R11
	SUBS   $1, R12
	BNE    block

	// y[row][4q…4q+3] = V20 + bias[4q…]
	ADD   R8<<4, R6, R14
	VLD1  (R14), [V23.S4]
	FADD4S(23, 20, 20)
	MUL   R7, R5, R14
	ADD   R4, R14
	ADD   R8<<4, R14
	VST1  [V20.S4], (R14)
	ADD   $1, R8
	CMP   $4, R8
	BNE   quarter
	ADD   $1, R7
	CMP   $8, R7
	BNE   row

	// The next tile: nb blocks of 320 bytes on, eight output rows down.
	MOVD  $320, R13
	MUL   R2, R13
	ADD   R13, R1
	ADD   R5<<3, R4
	SUBS  $1, R3
	BNE   tile
	RET
