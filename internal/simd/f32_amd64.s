#include "textflag.h"

// func dotAVX2(x *float32, y *float32, n int) float32
//
// Two accumulators of eight lanes, sixteen values a step while there are,
// then eight; n is a multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

dot16:
	CMPQ        CX, $16
	JB          dot8
	VMOVUPS     (SI), Y2
	VMOVUPS     32(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         dot16

dot8:
	CMPQ        CX, $8
	JB          dotsum
	VMOVUPS     (SI), Y2
	VFMADD231PS (DI), Y2, Y0

dotsum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyAVX2(a float32, x *float32, y *float32, n int)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX

axpy8:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JNZ         axpy8
	VZEROUPPER
	RET
