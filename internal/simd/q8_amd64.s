#include "textflag.h"

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
