#include "textflag.h"

// The attention kernels, AVX2 with FMA (see f32.go for what each computes;
// the Go versions there are the references the tests compare with). Each
// runs down rows of 32 floats (then 8) with a query's value broadcast; the
// blocks they repeat are these macros.

// ZERO4 clears four accumulators.
#define ZERO4(A, B, C, D) \
	VXORPS A, A, A; \
	VXORPS B, B, B; \
	VXORPS C, C, C; \
	VXORPS D, D, D

// FMA32 adds (SI)(R10*4), broadcast in Y4, times the 32 floats at (DX) to
// Y0–Y3.
#define FMA32 \
	VBROADCASTSS (SI)(R10*4), Y4; \
	VFMADD231PS  (DX), Y4, Y0; \
	VFMADD231PS  32(DX), Y4, Y1; \
	VFMADD231PS  64(DX), Y4, Y2; \
	VFMADD231PS  96(DX), Y4, Y3

// FMA32X2 is FMA32 for two queries, each load of the row (in Y10–Y13)
// feeding both: (SI)(R10*4) broadcast in Y8 into Y0–Y3, (R12)(R10*4) in Y9
// into Y4–Y7.
#define FMA32X2 \
	VBROADCASTSS (SI)(R10*4), Y8; \
	VBROADCASTSS (R12)(R10*4), Y9; \
	VMOVUPS      (DX), Y10; \
	VMOVUPS      32(DX), Y11; \
	VMOVUPS      64(DX), Y12; \
	VMOVUPS      96(DX), Y13; \
	VFMADD231PS  Y10, Y8, Y0; \
	VFMADD231PS  Y11, Y8, Y1; \
	VFMADD231PS  Y12, Y8, Y2; \
	VFMADD231PS  Y13, Y8, Y3; \
	VFMADD231PS  Y10, Y9, Y4; \
	VFMADD231PS  Y11, Y9, Y5; \
	VFMADD231PS  Y12, Y9, Y6; \
	VFMADD231PS  Y13, Y9, Y7

// SCALE4 multiplies four accumulators by S.
#define SCALE4(S, A, B, C, D) \
	VMULPS S, A, A; \
	VMULPS S, B, B; \
	VMULPS S, C, C; \
	VMULPS S, D, D

// STORE4 writes four accumulators to the 32 floats at (P).
#define STORE4(P, A, B, C, D) \
	VMOVUPS A, (P); \
	VMOVUPS B, 32(P); \
	VMOVUPS C, 64(P); \
	VMOVUPS D, 96(P)

// func scoresAVX2(out *float32, q *float32, kt *float32, ld int, hd int, n int)
//
// out[j] = Σ_e q[e]·kt[e·ld + j] for j < n (a multiple of 8): 32 columns a
// step in Y0–Y3 while there are, then 8, each step running down the hd
// rows of kt with q[e] broadcast in Y4.
//
// Registers: DI out, SI q, BX the step's column of kt, R8 ld in bytes, R9
// hd, CX columns left, DX the row in kt, R10 rows left.
TEXT ·scoresAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ kt+16(FP), BX
	MOVQ ld+24(FP), R8
	MOVQ hd+32(FP), R9
	MOVQ n+40(FP), CX
	SHLQ $2, R8

sc32:
	CMPQ   CX, $32
	JB     sc8
	ZERO4(Y0, Y1, Y2, Y3)
	MOVQ   BX, DX
	XORQ   R10, R10

sc32row:
	FMA32
	ADDQ         R8, DX
	INCQ         R10
	CMPQ         R10, R9
	JB           sc32row
	STORE4(DI, Y0, Y1, Y2, Y3)
	ADDQ         $128, DI
	ADDQ         $128, BX
	SUBQ         $32, CX
	JMP          sc32

sc8:
	CMPQ   CX, $8
	JB     scdone
	VXORPS Y0, Y0, Y0
	MOVQ   BX, DX
	XORQ   R10, R10

sc8row:
	VBROADCASTSS (SI)(R10*4), Y4
	VFMADD231PS  (DX), Y4, Y0
	ADDQ         R8, DX
	INCQ         R10
	CMPQ         R10, R9
	JB           sc8row
	VMOVUPS      Y0, (DI)
	ADDQ         $32, DI
	ADDQ         $32, BX
	SUBQ         $8, CX
	JMP          sc8

scdone:
	VZEROUPPER
	RET

// func weightedAVX2(out *float32, p *float32, n int, v *float32, ldv int, hd int, scale float32)
//
// out[e] = scale·Σ_s p[s]·v[s·ldv + e] for e < hd (a multiple of 8): 32
// columns a pass in Y0–Y3 while there are, then 8, each pass running down
// the n rows of v with p[s] broadcast in Y4; Y5 holds scale.
//
// Registers: DI out, SI p, BX the pass's column of v, R8 ldv in bytes, CX
// rows, R9 columns left, DX the row of v, R10 the row's index.
TEXT ·weightedAVX2(SB), NOSPLIT, $0-52
	VBROADCASTSS scale+48(FP), Y5
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ v+24(FP), BX
	MOVQ ldv+32(FP), R8
	MOVQ hd+40(FP), R9
	SHLQ $2, R8

wt32:
	CMPQ   R9, $32
	JB     wt8
	ZERO4(Y0, Y1, Y2, Y3)
	MOVQ   BX, DX
	XORQ   R10, R10

wt32row:
	CMPQ         R10, CX
	JAE          wt32store
	FMA32
	ADDQ         R8, DX
	INCQ         R10
	JMP          wt32row

wt32store:
	SCALE4(Y5, Y0, Y1, Y2, Y3)
	STORE4(DI, Y0, Y1, Y2, Y3)
	ADDQ    $128, DI
	ADDQ    $128, BX
	SUBQ    $32, R9
	JMP     wt32

wt8:
	CMPQ   R9, $8
	JB     wtdone
	VXORPS Y0, Y0, Y0
	MOVQ   BX, DX
	XORQ   R10, R10

wt8row:
	CMPQ         R10, CX
	JAE          wt8store
	VBROADCASTSS (SI)(R10*4), Y4
	VFMADD231PS  (DX), Y4, Y0
	ADDQ         R8, DX
	INCQ         R10
	JMP          wt8row

wt8store:
	VMULPS  Y5, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, BX
	SUBQ    $8, R9
	JMP     wt8

wtdone:
	VZEROUPPER
	RET

// func scores2AVX2(out0 *float32, out1 *float32, q0 *float32, q1 *float32, kt *float32, ld int, hd int, n int)
//
// scoresAVX2 for two queries at once, each load of kt feeding both: out0
// in Y0–Y3, out1 in Y4–Y7, q0[e] and q1[e] broadcast in Y8 and Y9, the
// row of kt in Y10–Y13.
//
// Registers: DI out0, R11 out1, SI q0, R12 q1, BX the step's column of
// kt, R8 ld in bytes, R9 hd, CX columns left, DX the row in kt, R10 rows
// done.
TEXT ·scores2AVX2(SB), NOSPLIT, $0-64
	MOVQ out0+0(FP), DI
	MOVQ out1+8(FP), R11
	MOVQ q0+16(FP), SI
	MOVQ q1+24(FP), R12
	MOVQ kt+32(FP), BX
	MOVQ ld+40(FP), R8
	MOVQ hd+48(FP), R9
	MOVQ n+56(FP), CX
	SHLQ $2, R8

s2c32:
	CMPQ   CX, $32
	JB     s2c8
	ZERO4(Y0, Y1, Y2, Y3)
	ZERO4(Y4, Y5, Y6, Y7)
	MOVQ   BX, DX
	XORQ   R10, R10

s2c32row:
	FMA32X2
	ADDQ         R8, DX
	INCQ         R10
	CMPQ         R10, R9
	JB           s2c32row
	STORE4(DI, Y0, Y1, Y2, Y3)
	STORE4(R11, Y4, Y5, Y6, Y7)
	ADDQ         $128, DI
	ADDQ         $128, R11
	ADDQ         $128, BX
	SUBQ         $32, CX
	JMP          s2c32

s2c8:
	CMPQ   CX, $8
	JB     s2done
	VXORPS Y0, Y0, Y0
	VXORPS Y4, Y4, Y4
	MOVQ   BX, DX
	XORQ   R10, R10

s2c8row:
	VBROADCASTSS (SI)(R10*4), Y8
	VBROADCASTSS (R12)(R10*4), Y9
	VMOVUPS      (DX), Y10
	VFMADD231PS  Y10, Y8, Y0
	VFMADD231PS  Y10, Y9, Y4
	ADDQ         R8, DX
	INCQ         R10
	CMPQ         R10, R9
	JB           s2c8row
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y4, (R11)
	ADDQ         $32, DI
	ADDQ         $32, R11
	ADDQ         $32, BX
	SUBQ         $8, CX
	JMP          s2c8

s2done:
	VZEROUPPER
	RET

// func weighted2AVX2(out0 *float32, out1 *float32, p0 *float32, p1 *float32, n int, v *float32, ldv int, scale0 float32, scale1 float32)
//
// weightedAVX2 for two queries' weights over the same value rows, for 32
// columns (hd = 32): out0 in Y0–Y3, out1 in Y4–Y7, p0[s] and p1[s] in Y8
// and Y9, the row of v in Y10–Y13.
//
// Registers: DI out0, R11 out1, SI p0, R12 p1, CX rows, DX the row of v,
// R8 ldv in bytes, R10 the row's index.
TEXT ·weighted2AVX2(SB), NOSPLIT, $0-64
	MOVQ   out0+0(FP), DI
	MOVQ   out1+8(FP), R11
	MOVQ   p0+16(FP), SI
	MOVQ   p1+24(FP), R12
	MOVQ   n+32(FP), CX
	MOVQ   v+40(FP), DX
	MOVQ   ldv+48(FP), R8
	SHLQ   $2, R8
	ZERO4(Y0, Y1, Y2, Y3)
	ZERO4(Y4, Y5, Y6, Y7)
	XORQ   R10, R10

w2row:
	CMPQ         R10, CX
	JAE          w2store
	FMA32X2
	ADDQ         R8, DX
	INCQ         R10
	JMP          w2row

w2store:
	VBROADCASTSS scale0+56(FP), Y8
	VBROADCASTSS scale1+60(FP), Y9
	SCALE4(Y8, Y0, Y1, Y2, Y3)
	SCALE4(Y9, Y4, Y5, Y6, Y7)
	STORE4(DI, Y0, Y1, Y2, Y3)
	STORE4(R11, Y4, Y5, Y6, Y7)
	VZEROUPPER
	RET
