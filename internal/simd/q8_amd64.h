// The loops of the Q4×Q8 and W8×Q8 kernels (see q8.go for the packed
// layouts), written once: q4q8_amd64.s and w8q8_amd64.s include them and
// fill in how their format's weights are read. For one group of sixteen
// weight rows and tiles of eight activation rows,
//   y[8t+i][r] = bias[r] + Σ_b dw[b][r]·da[b][i]·⟨w[b][r], q[b][i]⟩
// where a vector lane is a weight row and the four activation bytes a lane
// multiplies are broadcast from memory. Each macro is a whole kernel, from
// its arguments to its RET. vet's asmdecl does not look into macros, so it
// checks only the frame size on each TEXT line; the argument offsets here
// hold for every kernel because each one's Go declaration is an asmKernel
// (q8_amd64.go passes them as such).

// Q8VNNI is the AVX-512 VNNI kernel. Per block, WEIGHTS loads the weights
// of k-groups 0–7 into Z0–Z7 (four bytes of each of the 16 rows per lane,
// as VPDPBUSD's unsigned operand) and the rows' scales into Z8, from the
// block at R11, which is WBLOCK bytes long; Z9 holds MASK in every dword
// for it. For each of the eight activation rows, START(O) sets Z12 to the
// integer sum's start from the row's offset at O(SI), VPDPBUSD adds the
// eight k-groups' products (unsigned weight bytes × signed activation
// bytes), and the integer sum, converted, times dw·da goes into the row's
// accumulator Z20–Z27.
//
// Registers: DI the group's weights, R11 the current weight block, SI the
// current activation block, DX blocks per row, BX blocks left, CX tiles
// left, R8 the output row, R9 ldy in bytes, Z30 the bias.
#define Q8VNNI(MASK, WEIGHTS, START, WBLOCK) \
	MOVQ w+0(FP), DI; \
	MOVQ a+8(FP), SI; \
	MOVQ nb+16(FP), DX; \
	MOVQ tiles+24(FP), CX; \
	MOVQ y+32(FP), R8; \
	MOVQ ldy+40(FP), R9; \
	MOVQ bias+48(FP), R10; \
	SHLQ $2, R9; \
	MOVL $MASK, AX; \
	VPBROADCASTD AX, Z9; \
	VMOVUPS (R10), Z30; \
vtile: \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	MOVQ   DI, R11; \
	MOVQ   DX, BX; \
vblock: \
	WEIGHTS; \
	VROW(START, 0, 256, 288, Z20); \
	VROW(START, 32, 260, 292, Z21); \
	VROW(START, 64, 264, 296, Z22); \
	VROW(START, 96, 268, 300, Z23); \
	VROW(START, 128, 272, 304, Z24); \
	VROW(START, 160, 276, 308, Z25); \
	VROW(START, 192, 280, 312, Z26); \
	VROW(START, 224, 284, 316, Z27); \
	ADDQ    $WBLOCK, R11; \
	ADDQ    $320, SI; \
	DECQ    BX; \
	JNZ     vblock; \
	VSTORE(Z20); \
	VSTORE(Z21); \
	VSTORE(Z22); \
	VSTORE(Z23); \
	VSTORE(Z24); \
	VSTORE(Z25); \
	VSTORE(Z26); \
	VSTORE(Z27); \
	DECQ CX; \
	JNZ  vtile; \
	VZEROUPPER; \
	RET

// VROW is one activation row's block: q at Q(SI), its scale at D(SI), its
// offset at O(SI), its accumulator ACC.
#define VROW(START, Q, D, O, ACC) \
	START(O); \
	VPDPBUSD.BCST Q+0(SI), Z0, Z12; \
	VPDPBUSD.BCST Q+4(SI), Z1, Z12; \
	VPDPBUSD.BCST Q+8(SI), Z2, Z12; \
	VPDPBUSD.BCST Q+12(SI), Z3, Z12; \
	VPDPBUSD.BCST Q+16(SI), Z4, Z12; \
	VPDPBUSD.BCST Q+20(SI), Z5, Z12; \
	VPDPBUSD.BCST Q+24(SI), Z6, Z12; \
	VPDPBUSD.BCST Q+28(SI), Z7, Z12; \
	VCVTDQ2PS     Z12, Z12; \
	VMULPS.BCST   D(SI), Z8, Z13; \
	VFMADD231PS   Z12, Z13, ACC

// VSTORE writes one output row: ACC plus the bias.
#define VSTORE(ACC) \
	VADDPS  Z30, ACC, ACC; \
	VMOVUPS ACC, (R8); \
	ADDQ    R9, R8

// Q8AVX2 is the AVX2 kernel: eight rows a vector, so the group is done in
// two halves of eight rows (bytes 32h… of each packed vector and of the
// scales), and with sixteen registers two activation rows at a time. SETUP
// loads the format's constants (into Y8, if any). Per block, WEIGHTS loads
// the weights of k-groups 0–7 into Y0–Y7 and the scales into Y10, from the
// block at R11, which is WBLOCK bytes long; for each of the two rows,
// ROW(Q, D, O, ACC) adds to ACC the integer sum of the row's bytes at Q,
// converted, times dw·da (its scale at D, its offset at O from the pair's
// place in the block), VPMADDWD by the int16 ones in Y9 widening
// VPMADDUBSW's int16 pairs.
//
// Registers: DI the half's weights, R11 the current weight block, SI the
// tile's activations, R12 the current activation block, R13 8 × the pair's
// index (its rows' bytes are 64·pair into a block, their scales and
// offsets 8·pair), DX blocks per row, BX blocks left, CX tiles left, R14
// the half's first output row of the tile, R8 the output row, R9 ldy in
// bytes, R10 the half's bias, AX the halves left, Y11 and Y12 the pair's
// accumulators, Y13–Y15 the ROW's.
#define Q8AVX2(SETUP, WEIGHTS, ROW, WBLOCK) \
	MOVQ w+0(FP), DI; \
	MOVQ nb+16(FP), DX; \
	MOVQ ldy+40(FP), R9; \
	MOVQ bias+48(FP), R10; \
	SHLQ $2, R9; \
	SETUP; \
	MOVL $0x00010001, AX; \
	MOVQ AX, X9; \
	VPBROADCASTD X9, Y9; \
	MOVQ $2, AX; \
ahalf: \
	MOVQ a+8(FP), SI; \
	MOVQ tiles+24(FP), CX; \
	MOVQ y+32(FP), R14; \
atile: \
	XORQ R13, R13; \
	MOVQ R14, R8; \
apair: \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	MOVQ   DI, R11; \
	MOVQ   SI, R12; \
	MOVQ   DX, BX; \
ablock: \
	WEIGHTS; \
	ROW(0, 256, 288, Y11); \
	ROW(32, 260, 292, Y12); \
	ADDQ    $WBLOCK, R11; \
	ADDQ    $320, R12; \
	DECQ    BX; \
	JNZ     ablock; \
	VADDPS  (R10), Y11, Y11; \
	VMOVUPS Y11, (R8); \
	ADDQ    R9, R8; \
	VADDPS  (R10), Y12, Y12; \
	VMOVUPS Y12, (R8); \
	ADDQ    R9, R8; \
	ADDQ    $8, R13; \
	CMPQ    R13, $32; \
	JB      apair; \
	/* The next tile: past this tile's nb blocks, eight rows further down. */ \
	MOVQ  DX, BX; \
	IMULQ $320, BX; \
	ADDQ  BX, SI; \
	MOVQ  R9, BX; \
	SHLQ  $3, BX; \
	ADDQ  BX, R14; \
	DECQ  CX; \
	JNZ   atile; \
	/* The second half: rows 8–15, at byte 32 of the packed vectors, the */ \
	/* scales and the bias, and 8 floats into the output rows. */ \
	ADDQ $32, DI; \
	ADDQ $32, R10; \
	MOVQ y+32(FP), R14; \
	ADDQ $32, R14; \
	MOVQ R14, y+32(FP); \
	DECQ AX; \
	JNZ  ahalf; \
	VZEROUPPER; \
	RET
