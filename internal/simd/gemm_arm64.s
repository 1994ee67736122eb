#include "textflag.h"
#include "neon_arm64.h"

// The NEON micro-kernel behind Kernel.fn:
//   C[0:6][0:16] = max(C + A[0:6][0:k]·P, floor)
// with P one Packed panel of k rows of 16 floats. Twenty-four of the
// thirty-two vector registers hold the 6×16 tile (V0–V3 row 0, V4–V7
// row 1, … V20–V23 row 5); each step of k loads one panel row into
// V24–V27 and broadcasts one element of each of the six rows of A into
// V28–V31, reused once the row before has been multiplied.
//
// Registers: R0 steps of k left, R1–R6 the six rows of A (each stepping one
// float a step), R7 lda in bytes, R8 the panel, R9 a row of C, R10 ldc in
// bytes.

// FADD4S and FMAX4S are encoded in neon_arm64.h.

// ROW adds the broadcast element of A in T times the panel row in V24–V27
// into C0–C3.
#define ROW(T, C0, C1, C2, C3) \
	VFMLA V24.S4, T.S4, C0.S4; \
	VFMLA V25.S4, T.S4, C1.S4; \
	VFMLA V26.S4, T.S4, C2.S4; \
	VFMLA V27.S4, T.S4, C3.S4

// STORE adds the accumulators numbered C0–C3 to the row of C at R9,
// clamps it below at the floor in V28, writes it back and moves R9 to the
// next row.
#define STORE(C0, C1, C2, C3) \
	VLD1 (R9), [V24.S4, V25.S4, V26.S4, V27.S4]; \
	FADD4S(C0, 24, 24); \
	FADD4S(C1, 25, 25); \
	FADD4S(C2, 26, 26); \
	FADD4S(C3, 27, 27); \
	FMAX4S(28, 24, 24); \
	FMAX4S(28, 25, 25); \
	FMAX4S(28, 26, 26); \
	FMAX4S(28, 27, 27); \
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R9); \
	ADD R10, R9

// func kernelNEON(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
TEXT ·kernelNEON(SB), NOSPLIT, $0-52
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD lda+16(FP), R7
	MOVD p+24(FP), R8
	MOVD c+32(FP), R9
	MOVD ldc+40(FP), R10
	LSL  $2, R7
	LSL  $2, R10
	ADD  R7, R1, R2
	ADD  R7, R2, R3
	ADD  R7, R3, R4
	ADD  R7, R4, R5
	ADD  R7, R5, R6
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	CBZ  R0, done

loop:
	VLD1.P  64(R8), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1R.P 4(R1), [V28.S4]
	VLD1R.P 4(R2), [V29.S4]
	VLD1R.P 4(R3), [V30.S4]
	VLD1R.P 4(R4), [V31.S4]
	ROW(V28, V0, V1, V2, V3)
	ROW(V29, V4, V5, V6, V7)
	VLD1R.P 4(R5), [V28.S4]
	VLD1R.P 4(R6), [V29.S4]
	ROW(V30, V8, V9, V10, V11)
	ROW(V31, V12, V13, V14, V15)
	ROW(V28, V16, V17, V18, V19)
	ROW(V29, V20, V21, V22, V23)
	SUB  $1, R0
	CBNZ R0, loop

done:
	FMOVS floor+48(FP), F28
	VDUP  V28.S[0], V28.S4
	STORE(0, 1, 2, 3)
	STORE(4, 5, 6, 7)
	STORE(8, 9, 10, 11)
	STORE(12, 13, 14, 15)
	STORE(16, 17, 18, 19)
	STORE(20, 21, 22, 23)
	RET
