// The loops of the Q4×Q8 and W8×Q8 kernels with NEON's SDOT (see q8.go
// for the layouts and q8_amd64.h for the sum), written once: q4q8_arm64.s
// and w8q8_arm64.s include them and fill in how their format's weights are
// read. A 128-bit vector holds four weight rows, four bytes a lane, and
// SDOT by element multiplies them by one four-byte group of a 16-byte
// activation register (V16: k-groups 0–3, V17: 4–7), so a block's integer
// sum for four rows is eight SDOTs. The loops run over the tile's eight
// activation rows, the group's four quarters of four weight rows, then the
// blocks. As in q8_amd64.h, the macro is a whole kernel, from its
// arguments to its RET, each kernel's Go declaration an asmKernel.

// Q8NEONDOT is the kernel. SETUP loads the format's constants (into V19,
// if any); per block, START sets the integer sums in V18 to their start,
// from the row's offset at 32(R11) if the format has one, and SUMS adds
// the eight k-groups' products to them, reading the quarter's packed
// vectors through R14 (which R15 = 64 moves on from one to the next). The
// quarter's scales are at SCALES(R9), and a block of weights is WBLOCK
// bytes long.
//
// Registers: R0 the group's weights, R1 the tile's activations, R2 blocks
// per row, R3 tiles left, R4 the tile's first output row, R5 ldy in
// bytes, R6 the bias, R7 the activation row (0–7), R8 the quarter (0–3),
// R9 the block's weights for the quarter, R10 the row's activation bytes,
// R11 its scale (its offset 32 bytes on), R12 blocks left, R14 the packed
// vector, R15 64, V20 the accumulator.
#define Q8NEONDOT(SETUP, START, SUMS, SCALES, WBLOCK) \
	MOVD w+0(FP), R0; \
	MOVD a+8(FP), R1; \
	MOVD nb+16(FP), R2; \
	MOVD tiles+24(FP), R3; \
	MOVD y+32(FP), R4; \
	MOVD ldy+40(FP), R5; \
	MOVD bias+48(FP), R6; \
	LSL  $2, R5; \
	SETUP; \
	MOVD $64, R15; \
tile: \
	MOVD $0, R7; \
row: \
	MOVD $0, R8; \
quarter: \
	VEOR V20.B16, V20.B16, V20.B16; \
	ADD  R8<<4, R0, R9; \
	ADD  R7<<5, R1, R10; \
	ADD  R7<<2, R1, R11; \
	ADD  $256, R11; \
	MOVD R2, R12; \
block: \
	VLD1   (R10), [V16.B16, V17.B16]; \
	START; \
	MOVD   R9, R14; \
	SUMS; \
	SCVTF4S(18, 18); \
	ADD    $SCALES, R9, R14; \
	VLD1   (R14), [V21.S4]; \
	FMUL4S(21, 18, 18); \
	FMOVS  (R11), F22; \
	FMLA4S0(22, 18, 20); \
	ADD    $WBLOCK, R9; \
	ADD    $320, R10; \
	ADD    $320, R11; \
	SUBS   $1, R12; \
	BNE    block; \
	/* y[row][4q…4q+3] = V20 + bias[4q…] */ \
	ADD   R8<<4, R6, R14; \
	VLD1  (R14), [V23.S4]; \
	FADD4S(23, 20, 20); \
	MUL   R7, R5, R14; \
	ADD   R4, R14; \
	ADD   R8<<4, R14; \
	VST1  [V20.S4], (R14); \
	ADD   $1, R8; \
	CMP   $4, R8; \
	BNE   quarter; \
	ADD   $1, R7; \
	CMP   $8, R7; \
	BNE   row; \
	/* The next tile: nb blocks of 320 bytes on, eight output rows down. */ \
	MOVD  $320, R13; \
	MUL   R2, R13; \
	ADD   R13, R1; \
	ADD   R5<<3, R4; \
	SUBS  $1, R3; \
	BNE   tile; \
	RET
