#include "textflag.h"

// The softmax and GELU kernels, AVX2 with FMA (see f32.go; the Go versions
// there are the references the tests compare with).

// f32c holds each constant eight times, a vector's worth, so that it can be
// a memory operand (SPLAT8 writes the eight); its offsets:
#define LOG2E 0
#define LN2HI 32
#define LN2LO 64
#define C720 96
#define C120 128
#define C24 160
#define C6 192
#define HALF 224
#define ONE 256
#define LO 288
#define HI 320
#define RSQRT2 352
#define FOUR 384
#define MFOUR 416
#define A13 448
#define A11 480
#define A9 512
#define A7 544
#define A5 576
#define A3 608
#define A1 640
#define B8 672
#define B6 704
#define B4 736
#define B2 768
#define B0 800
#define I127 832

#define SPLAT8(OFF, BITS) \
	DATA f32c<>+(OFF)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+4)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+8)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+12)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+16)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+20)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+24)(SB)/4, $BITS; \
	DATA f32c<>+(OFF+28)(SB)/4, $BITS

SPLAT8(LOG2E, 0x3fb8aa3b)
SPLAT8(LN2HI, 0x3f318000)
SPLAT8(LN2LO, 0xb95e8083)
SPLAT8(C720, 0x3ab60b61)
SPLAT8(C120, 0x3c088889)
SPLAT8(C24, 0x3d2aaaab)
SPLAT8(C6, 0x3e2aaaab)
SPLAT8(HALF, 0x3f000000)
SPLAT8(ONE, 0x3f800000)
SPLAT8(LO, 0xc2ae0000)
SPLAT8(HI, 0x42b00000)
SPLAT8(RSQRT2, 0x3f3504f3)
SPLAT8(FOUR, 0x40800000)
SPLAT8(MFOUR, 0xc0800000)
SPLAT8(A13, 0xaf95df0b)
SPLAT8(A11, 0x32edffee)
SPLAT8(A9, 0xb60cff51)
SPLAT8(A7, 0xb86ec2d2)
SPLAT8(A5, 0xba40ac63)
SPLAT8(A3, 0xbb41a1f6)
SPLAT8(A1, 0xbc83dbd4)
SPLAT8(B8, 0xb77460cd)
SPLAT8(B6, 0xb95fbd29)
SPLAT8(B4, 0xbadc924e)
SPLAT8(B2, 0xbbf19bf8)
SPLAT8(B0, 0xbc69b6a7)
SPLAT8(I127, 0x0000007f)
GLOBL f32c<>(SB), RODATA|NOPTR, $864

// func maxAVX2(x *float32, n int) float32
//
// The largest of n values (a multiple of 8, at least 8).
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SUBQ    $8, CX

max8:
	JZ      maxdone
	VMAXPS  (SI), Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     max8

maxdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// EXP sets Y0 to e^Y0 as exp32 computes it (f32.go): Y0 = n·ln2 + r with n
// rounded to even, e^r by the degree-6 Taylor polynomial, times 2ⁿ built in
// the exponent bits; lanes below −87 become 0. Clobbers Y1–Y3.
#define EXP \
	VMINPS       f32c<>+HI(SB), Y0, Y0; \
	VCMPPS       $13, f32c<>+LO(SB), Y0, Y3; \
	VMULPS       f32c<>+LOG2E(SB), Y0, Y1; \
	VROUNDPS     $0, Y1, Y1; \
	VFNMADD231PS f32c<>+LN2HI(SB), Y1, Y0; \
	VFNMADD231PS f32c<>+LN2LO(SB), Y1, Y0; \
	VMOVUPS      f32c<>+C720(SB), Y2; \
	VFMADD213PS  f32c<>+C120(SB), Y0, Y2; \
	VFMADD213PS  f32c<>+C24(SB), Y0, Y2; \
	VFMADD213PS  f32c<>+C6(SB), Y0, Y2; \
	VFMADD213PS  f32c<>+HALF(SB), Y0, Y2; \
	VFMADD213PS  f32c<>+ONE(SB), Y0, Y2; \
	VFMADD213PS  f32c<>+ONE(SB), Y0, Y2; \
	VCVTPS2DQ    Y1, Y1; \
	VPADDD       f32c<>+I127(SB), Y1, Y1; \
	VPSLLD       $23, Y1, Y1; \
	VMULPS       Y1, Y2, Y0; \
	VANDPS       Y3, Y0, Y0

// func expSumAVX2(x *float32, n int, scale float32, sm float32) float32
//
// x[i] = e^(scale·x[i] − sm) for n values (a multiple of 8), returning
// their sum (in eight lanes, added at the end).
TEXT ·expSumAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y4
	VBROADCASTSS sm+20(FP), Y5
	VXORPS       Y6, Y6, Y6

exp8:
	VMOVUPS     (SI), Y0
	VFMSUB213PS Y5, Y4, Y0
	EXP
	VMOVUPS     Y0, (SI)
	VADDPS      Y0, Y6, Y6
	ADDQ        $32, SI
	SUBQ        $8, CX
	JNZ         exp8

	VEXTRACTF128 $1, Y6, X1
	VADDPS       X1, X6, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func geluAVX2(x *float32, n int)
//
// x[i] = 0.5·x·(1 + erf(x/√2)) for n values (a multiple of 8), erf as
// erf32 computes it (f32.go): clamped to [−4, 4], an odd polynomial over an
// even one in z².
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX

gelu8:
	VMOVUPS     (SI), Y5
	VMULPS      f32c<>+RSQRT2(SB), Y5, Y0
	VMINPS      f32c<>+FOUR(SB), Y0, Y0
	VMAXPS      f32c<>+MFOUR(SB), Y0, Y0
	VMULPS      Y0, Y0, Y1
	VMOVUPS     f32c<>+A13(SB), Y2
	VFMADD213PS f32c<>+A11(SB), Y1, Y2
	VFMADD213PS f32c<>+A9(SB), Y1, Y2
	VFMADD213PS f32c<>+A7(SB), Y1, Y2
	VFMADD213PS f32c<>+A5(SB), Y1, Y2
	VFMADD213PS f32c<>+A3(SB), Y1, Y2
	VFMADD213PS f32c<>+A1(SB), Y1, Y2
	VMULPS      Y0, Y2, Y2
	VMOVUPS     f32c<>+B8(SB), Y3
	VFMADD213PS f32c<>+B6(SB), Y1, Y3
	VFMADD213PS f32c<>+B4(SB), Y1, Y3
	VFMADD213PS f32c<>+B2(SB), Y1, Y3
	VFMADD213PS f32c<>+B0(SB), Y1, Y3
	VDIVPS      Y3, Y2, Y2
	VADDPS      f32c<>+ONE(SB), Y2, Y2
	VMULPS      f32c<>+HALF(SB), Y5, Y5
	VMULPS      Y2, Y5, Y5
	VMOVUPS     Y5, (SI)
	ADDQ        $32, SI
	SUBQ        $8, CX
	JNZ         gelu8
	VZEROUPPER
	RET
