#include "textflag.h"

// func dotsAVX2(abs *uint8, q *int8, rows *int8, dim int, n int, out *int32)
//
// For each of n rows of dim bytes: 32 bytes a step, the row's bytes take
// the signs of q's (VPSIGNB), VPMADDUBSW multiplies them by |q| and adds
// neighbours into int16 (at most 2·127·127, no saturation), VPMADDWD by
// ones adds neighbours into int32, and Y0 accumulates; the row's sum of
// Y0's eight lanes goes to out.
//
// Registers: SI abs, R10 q, DI the row, DX dim, CX rows left, R8 out, R9
// the byte offset in the row, Y15 sixteen int16 ones.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-48
	MOVQ abs+0(FP), SI
	MOVQ q+8(FP), R10
	MOVQ rows+16(FP), DI
	MOVQ dim+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), R8
	MOVL $0x00010001, AX
	MOVQ AX, X15
	VPBROADCASTD X15, Y15

row:
	VPXOR Y0, Y0, Y0
	XORQ  R9, R9

step:
	VMOVDQU    (DI)(R9*1), Y2
	VPSIGNB    (R10)(R9*1), Y2, Y2
	VMOVDQU    (SI)(R9*1), Y3
	VPMADDUBSW Y2, Y3, Y2
	VPMADDWD   Y15, Y2, Y2
	VPADDD     Y2, Y0, Y0
	ADDQ       $32, R9
	CMPQ       R9, DX
	JB         step

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R8)
	ADDQ         $4, R8
	ADDQ         DX, DI
	DECQ         CX
	JNE          row

	VZEROUPPER
	RET
