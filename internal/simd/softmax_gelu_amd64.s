#include "textflag.h"

// The softmax and GELU kernels, AVX2 with FMA (see f32.go; the Go versions
// there are the references the tests compare with).

// f32c holds each constant eight times, a vector's worth, so that it can be
// a memory operand; its offsets:
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

DATA f32c<>+0(SB)/4, $0x3fb8aa3b
DATA f32c<>+4(SB)/4, $0x3fb8aa3b
DATA f32c<>+8(SB)/4, $0x3fb8aa3b
DATA f32c<>+12(SB)/4, $0x3fb8aa3b
DATA f32c<>+16(SB)/4, $0x3fb8aa3b
DATA f32c<>+20(SB)/4, $0x3fb8aa3b
DATA f32c<>+24(SB)/4, $0x3fb8aa3b
DATA f32c<>+28(SB)/4, $0x3fb8aa3b
DATA f32c<>+32(SB)/4, $0x3f318000
DATA f32c<>+36(SB)/4, $0x3f318000
DATA f32c<>+40(SB)/4, $0x3f318000
DATA f32c<>+44(SB)/4, $0x3f318000
DATA f32c<>+48(SB)/4, $0x3f318000
DATA f32c<>+52(SB)/4, $0x3f318000
DATA f32c<>+56(SB)/4, $0x3f318000
DATA f32c<>+60(SB)/4, $0x3f318000
DATA f32c<>+64(SB)/4, $0xb95e8083
DATA f32c<>+68(SB)/4, $0xb95e8083
DATA f32c<>+72(SB)/4, $0xb95e8083
DATA f32c<>+76(SB)/4, $0xb95e8083
DATA f32c<>+80(SB)/4, $0xb95e8083
DATA f32c<>+84(SB)/4, $0xb95e8083
DATA f32c<>+88(SB)/4, $0xb95e8083
DATA f32c<>+92(SB)/4, $0xb95e8083
DATA f32c<>+96(SB)/4, $0x3ab60b61
DATA f32c<>+100(SB)/4, $0x3ab60b61
DATA f32c<>+104(SB)/4, $0x3ab60b61
DATA f32c<>+108(SB)/4, $0x3ab60b61
DATA f32c<>+112(SB)/4, $0x3ab60b61
DATA f32c<>+116(SB)/4, $0x3ab60b61
DATA f32c<>+120(SB)/4, $0x3ab60b61
DATA f32c<>+124(SB)/4, $0x3ab60b61
DATA f32c<>+128(SB)/4, $0x3c088889
DATA f32c<>+132(SB)/4, $0x3c088889
DATA f32c<>+136(SB)/4, $0x3c088889
DATA f32c<>+140(SB)/4, $0x3c088889
DATA f32c<>+144(SB)/4, $0x3c088889
DATA f32c<>+148(SB)/4, $0x3c088889
DATA f32c<>+152(SB)/4, $0x3c088889
DATA f32c<>+156(SB)/4, $0x3c088889
DATA f32c<>+160(SB)/4, $0x3d2aaaab
DATA f32c<>+164(SB)/4, $0x3d2aaaab
DATA f32c<>+168(SB)/4, $0x3d2aaaab
DATA f32c<>+172(SB)/4, $0x3d2aaaab
DATA f32c<>+176(SB)/4, $0x3d2aaaab
DATA f32c<>+180(SB)/4, $0x3d2aaaab
DATA f32c<>+184(SB)/4, $0x3d2aaaab
DATA f32c<>+188(SB)/4, $0x3d2aaaab
DATA f32c<>+192(SB)/4, $0x3e2aaaab
DATA f32c<>+196(SB)/4, $0x3e2aaaab
DATA f32c<>+200(SB)/4, $0x3e2aaaab
DATA f32c<>+204(SB)/4, $0x3e2aaaab
DATA f32c<>+208(SB)/4, $0x3e2aaaab
DATA f32c<>+212(SB)/4, $0x3e2aaaab
DATA f32c<>+216(SB)/4, $0x3e2aaaab
DATA f32c<>+220(SB)/4, $0x3e2aaaab
DATA f32c<>+224(SB)/4, $0x3f000000
DATA f32c<>+228(SB)/4, $0x3f000000
DATA f32c<>+232(SB)/4, $0x3f000000
DATA f32c<>+236(SB)/4, $0x3f000000
DATA f32c<>+240(SB)/4, $0x3f000000
DATA f32c<>+244(SB)/4, $0x3f000000
DATA f32c<>+248(SB)/4, $0x3f000000
DATA f32c<>+252(SB)/4, $0x3f000000
DATA f32c<>+256(SB)/4, $0x3f800000
DATA f32c<>+260(SB)/4, $0x3f800000
DATA f32c<>+264(SB)/4, $0x3f800000
DATA f32c<>+268(SB)/4, $0x3f800000
DATA f32c<>+272(SB)/4, $0x3f800000
DATA f32c<>+276(SB)/4, $0x3f800000
DATA f32c<>+280(SB)/4, $0x3f800000
DATA f32c<>+284(SB)/4, $0x3f800000
DATA f32c<>+288(SB)/4, $0xc2ae0000
DATA f32c<>+292(SB)/4, $0xc2ae0000
DATA f32c<>+296(SB)/4, $0xc2ae0000
DATA f32c<>+300(SB)/4, $0xc2ae0000
DATA f32c<>+304(SB)/4, $0xc2ae0000
DATA f32c<>+308(SB)/4, $0xc2ae0000
DATA f32c<>+312(SB)/4, $0xc2ae0000
DATA f32c<>+316(SB)/4, $0xc2ae0000
DATA f32c<>+320(SB)/4, $0x42b00000
DATA f32c<>+324(SB)/4, $0x42b00000
DATA f32c<>+328(SB)/4, $0x42b00000
DATA f32c<>+332(SB)/4, $0x42b00000
DATA f32c<>+336(SB)/4, $0x42b00000
DATA f32c<>+340(SB)/4, $0x42b00000
DATA f32c<>+344(SB)/4, $0x42b00000
DATA f32c<>+348(SB)/4, $0x42b00000
DATA f32c<>+352(SB)/4, $0x3f3504f3
DATA f32c<>+356(SB)/4, $0x3f3504f3
DATA f32c<>+360(SB)/4, $0x3f3504f3
DATA f32c<>+364(SB)/4, $0x3f3504f3
DATA f32c<>+368(SB)/4, $0x3f3504f3
DATA f32c<>+372(SB)/4, $0x3f3504f3
DATA f32c<>+376(SB)/4, $0x3f3504f3
DATA f32c<>+380(SB)/4, $0x3f3504f3
DATA f32c<>+384(SB)/4, $0x40800000
DATA f32c<>+388(SB)/4, $0x40800000
DATA f32c<>+392(SB)/4, $0x40800000
DATA f32c<>+396(SB)/4, $0x40800000
DATA f32c<>+400(SB)/4, $0x40800000
DATA f32c<>+404(SB)/4, $0x40800000
DATA f32c<>+408(SB)/4, $0x40800000
DATA f32c<>+412(SB)/4, $0x40800000
DATA f32c<>+416(SB)/4, $0xc0800000
DATA f32c<>+420(SB)/4, $0xc0800000
DATA f32c<>+424(SB)/4, $0xc0800000
DATA f32c<>+428(SB)/4, $0xc0800000
DATA f32c<>+432(SB)/4, $0xc0800000
DATA f32c<>+436(SB)/4, $0xc0800000
DATA f32c<>+440(SB)/4, $0xc0800000
DATA f32c<>+444(SB)/4, $0xc0800000
DATA f32c<>+448(SB)/4, $0xaf95df0b
DATA f32c<>+452(SB)/4, $0xaf95df0b
DATA f32c<>+456(SB)/4, $0xaf95df0b
DATA f32c<>+460(SB)/4, $0xaf95df0b
DATA f32c<>+464(SB)/4, $0xaf95df0b
DATA f32c<>+468(SB)/4, $0xaf95df0b
DATA f32c<>+472(SB)/4, $0xaf95df0b
DATA f32c<>+476(SB)/4, $0xaf95df0b
DATA f32c<>+480(SB)/4, $0x32edffee
DATA f32c<>+484(SB)/4, $0x32edffee
DATA f32c<>+488(SB)/4, $0x32edffee
DATA f32c<>+492(SB)/4, $0x32edffee
DATA f32c<>+496(SB)/4, $0x32edffee
DATA f32c<>+500(SB)/4, $0x32edffee
DATA f32c<>+504(SB)/4, $0x32edffee
DATA f32c<>+508(SB)/4, $0x32edffee
DATA f32c<>+512(SB)/4, $0xb60cff51
DATA f32c<>+516(SB)/4, $0xb60cff51
DATA f32c<>+520(SB)/4, $0xb60cff51
DATA f32c<>+524(SB)/4, $0xb60cff51
DATA f32c<>+528(SB)/4, $0xb60cff51
DATA f32c<>+532(SB)/4, $0xb60cff51
DATA f32c<>+536(SB)/4, $0xb60cff51
DATA f32c<>+540(SB)/4, $0xb60cff51
DATA f32c<>+544(SB)/4, $0xb86ec2d2
DATA f32c<>+548(SB)/4, $0xb86ec2d2
DATA f32c<>+552(SB)/4, $0xb86ec2d2
DATA f32c<>+556(SB)/4, $0xb86ec2d2
DATA f32c<>+560(SB)/4, $0xb86ec2d2
DATA f32c<>+564(SB)/4, $0xb86ec2d2
DATA f32c<>+568(SB)/4, $0xb86ec2d2
DATA f32c<>+572(SB)/4, $0xb86ec2d2
DATA f32c<>+576(SB)/4, $0xba40ac63
DATA f32c<>+580(SB)/4, $0xba40ac63
DATA f32c<>+584(SB)/4, $0xba40ac63
DATA f32c<>+588(SB)/4, $0xba40ac63
DATA f32c<>+592(SB)/4, $0xba40ac63
DATA f32c<>+596(SB)/4, $0xba40ac63
DATA f32c<>+600(SB)/4, $0xba40ac63
DATA f32c<>+604(SB)/4, $0xba40ac63
DATA f32c<>+608(SB)/4, $0xbb41a1f6
DATA f32c<>+612(SB)/4, $0xbb41a1f6
DATA f32c<>+616(SB)/4, $0xbb41a1f6
DATA f32c<>+620(SB)/4, $0xbb41a1f6
DATA f32c<>+624(SB)/4, $0xbb41a1f6
DATA f32c<>+628(SB)/4, $0xbb41a1f6
DATA f32c<>+632(SB)/4, $0xbb41a1f6
DATA f32c<>+636(SB)/4, $0xbb41a1f6
DATA f32c<>+640(SB)/4, $0xbc83dbd4
DATA f32c<>+644(SB)/4, $0xbc83dbd4
DATA f32c<>+648(SB)/4, $0xbc83dbd4
DATA f32c<>+652(SB)/4, $0xbc83dbd4
DATA f32c<>+656(SB)/4, $0xbc83dbd4
DATA f32c<>+660(SB)/4, $0xbc83dbd4
DATA f32c<>+664(SB)/4, $0xbc83dbd4
DATA f32c<>+668(SB)/4, $0xbc83dbd4
DATA f32c<>+672(SB)/4, $0xb77460cd
DATA f32c<>+676(SB)/4, $0xb77460cd
DATA f32c<>+680(SB)/4, $0xb77460cd
DATA f32c<>+684(SB)/4, $0xb77460cd
DATA f32c<>+688(SB)/4, $0xb77460cd
DATA f32c<>+692(SB)/4, $0xb77460cd
DATA f32c<>+696(SB)/4, $0xb77460cd
DATA f32c<>+700(SB)/4, $0xb77460cd
DATA f32c<>+704(SB)/4, $0xb95fbd29
DATA f32c<>+708(SB)/4, $0xb95fbd29
DATA f32c<>+712(SB)/4, $0xb95fbd29
DATA f32c<>+716(SB)/4, $0xb95fbd29
DATA f32c<>+720(SB)/4, $0xb95fbd29
DATA f32c<>+724(SB)/4, $0xb95fbd29
DATA f32c<>+728(SB)/4, $0xb95fbd29
DATA f32c<>+732(SB)/4, $0xb95fbd29
DATA f32c<>+736(SB)/4, $0xbadc924e
DATA f32c<>+740(SB)/4, $0xbadc924e
DATA f32c<>+744(SB)/4, $0xbadc924e
DATA f32c<>+748(SB)/4, $0xbadc924e
DATA f32c<>+752(SB)/4, $0xbadc924e
DATA f32c<>+756(SB)/4, $0xbadc924e
DATA f32c<>+760(SB)/4, $0xbadc924e
DATA f32c<>+764(SB)/4, $0xbadc924e
DATA f32c<>+768(SB)/4, $0xbbf19bf8
DATA f32c<>+772(SB)/4, $0xbbf19bf8
DATA f32c<>+776(SB)/4, $0xbbf19bf8
DATA f32c<>+780(SB)/4, $0xbbf19bf8
DATA f32c<>+784(SB)/4, $0xbbf19bf8
DATA f32c<>+788(SB)/4, $0xbbf19bf8
DATA f32c<>+792(SB)/4, $0xbbf19bf8
DATA f32c<>+796(SB)/4, $0xbbf19bf8
DATA f32c<>+800(SB)/4, $0xbc69b6a7
DATA f32c<>+804(SB)/4, $0xbc69b6a7
DATA f32c<>+808(SB)/4, $0xbc69b6a7
DATA f32c<>+812(SB)/4, $0xbc69b6a7
DATA f32c<>+816(SB)/4, $0xbc69b6a7
DATA f32c<>+820(SB)/4, $0xbc69b6a7
DATA f32c<>+824(SB)/4, $0xbc69b6a7
DATA f32c<>+828(SB)/4, $0xbc69b6a7
DATA f32c<>+832(SB)/4, $0x0000007f
DATA f32c<>+836(SB)/4, $0x0000007f
DATA f32c<>+840(SB)/4, $0x0000007f
DATA f32c<>+844(SB)/4, $0x0000007f
DATA f32c<>+848(SB)/4, $0x0000007f
DATA f32c<>+852(SB)/4, $0x0000007f
DATA f32c<>+856(SB)/4, $0x0000007f
DATA f32c<>+860(SB)/4, $0x0000007f
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
