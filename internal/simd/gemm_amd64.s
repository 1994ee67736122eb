#include "textflag.h"

// The micro-kernels behind Kernel.fn:
//   C[0:6][0:nr] = max(C + A[0:6][0:k]·P, floor)
// with P one Packed panel of k rows of nr floats. Twelve vector registers
// hold the 6×nr tile; each step of k loads one panel row (two registers)
// and broadcasts one element of each of the six rows of A.
//
// Registers: CX steps of k left, SI row 0 of A, R9 row 3 of A, DX lda in
// bytes (rows 1, 2, 4, 5 are SI+DX, SI+2·DX, R9+DX, R9+2·DX), BX the panel,
// DI a row of C, R8 ldc in bytes.

#define PROLOGUE \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ lda+16(FP), DX; \
	MOVQ p+24(FP), BX; \
	MOVQ c+32(FP), DI; \
	MOVQ ldc+40(FP), R8; \
	SHLQ $2, DX; \
	SHLQ $2, R8; \
	LEAQ (SI)(DX*2), R9; \
	ADDQ DX, R9

// ROW adds row (addr) of A times the panel row in B0|B1 into C0|C1, using T.
#define ROW(addr, T, B0, B1, C0, C1) \
	VBROADCASTSS addr, T; \
	VFMADD231PS B0, T, C0; \
	VFMADD231PS B1, T, C1

// STORE adds C0|C1 to the row of C at DI, clamps it below at F, writes it
// back and moves DI to the next row. W is the byte width of one register.
#define STORE(W, F, C0, C1) \
	VADDPS (DI), C0, C0; \
	VADDPS W(DI), C1, C1; \
	VMAXPS F, C0, C0; \
	VMAXPS F, C1, C1; \
	VMOVUPS C0, (DI); \
	VMOVUPS C1, W(DI); \
	ADDQ R8, DI

// func kernelAVX512(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
TEXT ·kernelAVX512(SB), NOSPLIT, $0-52
	PROLOGUE
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	TESTQ CX, CX
	JE done512

loop512:
	VMOVUPS (BX), Z12
	VMOVUPS 64(BX), Z13
	ROW((SI), Z14, Z12, Z13, Z0, Z1)
	ROW((SI)(DX*1), Z15, Z12, Z13, Z2, Z3)
	ROW((SI)(DX*2), Z16, Z12, Z13, Z4, Z5)
	ROW((R9), Z17, Z12, Z13, Z6, Z7)
	ROW((R9)(DX*1), Z18, Z12, Z13, Z8, Z9)
	ROW((R9)(DX*2), Z19, Z12, Z13, Z10, Z11)
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $128, BX
	DECQ CX
	JNE  loop512

done512:
	VBROADCASTSS floor+48(FP), Z14
	STORE(64, Z14, Z0, Z1)
	STORE(64, Z14, Z2, Z3)
	STORE(64, Z14, Z4, Z5)
	STORE(64, Z14, Z6, Z7)
	STORE(64, Z14, Z8, Z9)
	STORE(64, Z14, Z10, Z11)
	VZEROUPPER
	RET

// func kernelAVX2(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
TEXT ·kernelAVX2(SB), NOSPLIT, $0-52
	PROLOGUE
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ CX, CX
	JE done2

loop2:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	ROW((SI), Y14, Y12, Y13, Y0, Y1)
	ROW((SI)(DX*1), Y15, Y12, Y13, Y2, Y3)
	ROW((SI)(DX*2), Y14, Y12, Y13, Y4, Y5)
	ROW((R9), Y15, Y12, Y13, Y6, Y7)
	ROW((R9)(DX*1), Y14, Y12, Y13, Y8, Y9)
	ROW((R9)(DX*2), Y15, Y12, Y13, Y10, Y11)
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $64, BX
	DECQ CX
	JNE  loop2

done2:
	VBROADCASTSS floor+48(FP), Y14
	STORE(32, Y14, Y0, Y1)
	STORE(32, Y14, Y2, Y3)
	STORE(32, Y14, Y4, Y5)
	STORE(32, Y14, Y6, Y7)
	STORE(32, Y14, Y8, Y9)
	STORE(32, Y14, Y10, Y11)
	VZEROUPPER
	RET
