#include "textflag.h"
#include "neon_arm64.h"

// func dotsNEON(q *int8, rows *int8, dim int, n int, out *int32)
//
// For each of n rows of dim bytes: 32 bytes a step, in two halves of 16,
// SMULL multiplies the low eight bytes of q and the row into int16,
// SMLAL2 adds the products of the high eight (a sum of two products is at
// most 2·127·127, no overflow), and SADALP adds neighbouring int16 into
// the int32 accumulators V3 and V4; the row's sum of their lanes goes to
// out.
//
// Registers: R0 q, R1 the row (stepping through every row), R2 dim, R3
// rows left, R4 out, R5 the step's place in q, R6 bytes of the row left.

// SMULL, SMLAL2 and SADALP are encoded in neon_arm64.h.

TEXT ·dotsNEON(SB), NOSPLIT, $0-40
	MOVD q+0(FP), R0
	MOVD rows+8(FP), R1
	MOVD dim+16(FP), R2
	MOVD n+24(FP), R3
	MOVD out+32(FP), R4

row:
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	MOVD R0, R5
	MOVD R2, R6

step:
	VLD1.P 32(R5), [V0.B16, V1.B16]
	VLD1.P 32(R1), [V5.B16, V6.B16]
	SMULL8B(5, 0, 2)
	SMLAL216B(5, 0, 2)
	SADALP8H(2, 3)
	SMULL8B(6, 1, 7)
	SMLAL216B(6, 1, 7)
	SADALP8H(7, 4)
	SUBS $32, R6, R6
	BNE  step

	VADD  V4.S4, V3.S4, V3.S4
	VADDV V3.S4, V3
	VMOV  V3.S[0], R7
	MOVW.P R7, 4(R4)
	SUBS  $1, R3, R3
	BNE   row
	RET
