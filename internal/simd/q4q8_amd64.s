#include "textflag.h"
#include "q8_amd64.h"

// The Q4×Q8 kernels: q8_amd64.h's loops, the weights nibbles (0–15) and
// each row's sum starting at its offset −8·Σq, which takes the nibbles'
// bias of 8 away:
//   y[8t+i][r] = bias[r] + Σ_b dw[b][r]·da[b][i]·(⟨w[b][r], q[b][i]⟩ − 8·Σq[b][i])

// Q4VNNI unpacks a block's four packed vectors into the eight k-groups'
// weight bytes, vector j's low nibbles k-group j and its high ones j+4,
// with the nibble mask in Z9, and loads the scales that follow.
#define Q4VNNI \
	VUNPACK(0, Z0, Z4); \
	VUNPACK(64, Z1, Z5); \
	VUNPACK(128, Z2, Z6); \
	VUNPACK(192, Z3, Z7); \
	VMOVUPS 256(R11), Z8

// VUNPACK splits the packed vector at OFF(R11) into the weight bytes of
// k-groups LO (low nibbles) and HI (high nibbles).
#define VUNPACK(OFF, LO, HI) \
	VMOVDQU32 OFF(R11), Z10; \
	VPSRLW    $4, Z10, HI; \
	VPANDD    Z9, Z10, LO; \
	VPANDD    Z9, HI, HI

// Q4START starts a row's sum at its offset.
#define Q4START(O) VPBROADCASTD O(SI), Z12

// func q4q8VNNI(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·q4q8VNNI(SB), NOSPLIT, $0-56
	Q8VNNI(0x0f0f0f0f, Q4VNNI, Q4START, 320)

// Q4SETUP broadcasts the nibble mask into Y8.
#define Q4SETUP \
	MOVL $0x0f0f0f0f, AX; \
	MOVQ AX, X8; \
	VPBROADCASTD X8, Y8

// Q4AVX2 is Q4VNNI with Y registers.
#define Q4AVX2 \
	AUNPACK(0, Y0, Y4); \
	AUNPACK(64, Y1, Y5); \
	AUNPACK(128, Y2, Y6); \
	AUNPACK(192, Y3, Y7); \
	VMOVUPS 256(R11), Y10

// AUNPACK is VUNPACK with Y registers, the nibble mask in Y8.
#define AUNPACK(OFF, LO, HI) \
	VMOVDQU OFF(R11), Y13; \
	VPSRLW  $4, Y13, HI; \
	VPAND   Y8, Y13, LO; \
	VPAND   Y8, HI, HI

// Q4ROW: VPMADDUBSW multiplies the weight bytes (unsigned) by the
// broadcast activation bytes (signed) into int16 pairs (at most 2·15·128
// each, so the eight k-groups' sum, at most 30720, cannot overflow int16),
// VPMADDWD by ones widens it to int32 once, and the offset is added.
#define Q4ROW(Q, D, O, ACC) \
	VPBROADCASTD Q+0(R12)(R13*8), Y13; \
	VPMADDUBSW   Y13, Y0, Y15; \
	AK(Q+4, Y1); \
	AK(Q+8, Y2); \
	AK(Q+12, Y3); \
	AK(Q+16, Y4); \
	AK(Q+20, Y5); \
	AK(Q+24, Y6); \
	AK(Q+28, Y7); \
	VPMADDWD     Y9, Y15, Y15; \
	VPBROADCASTD O(R12)(R13*1), Y13; \
	VPADDD       Y13, Y15, Y15; \
	VCVTDQ2PS    Y15, Y15; \
	VBROADCASTSS D(R12)(R13*1), Y13; \
	VMULPS       Y10, Y13, Y13; \
	VFMADD231PS  Y15, Y13, ACC

// AK adds the products of a k-group (weights in W) with the activation
// bytes at QK(R12) to the int16 sums in Y15.
#define AK(QK, W) \
	VPBROADCASTD QK(R12)(R13*8), Y13; \
	VPMADDUBSW   Y13, W, Y14; \
	VPADDW       Y14, Y15, Y15

// func q4q8AVX2(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·q4q8AVX2(SB), NOSPLIT, $0-56
	Q8AVX2(Q4SETUP, Q4AVX2, Q4ROW, 320)
