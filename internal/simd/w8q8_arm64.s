#include "textflag.h"
#include "neon_arm64.h"
#include "q8_arm64.h"

// The W8×Q8 kernel with NEON's SDOT: q8_arm64.h's loops, the weights int8.
// SDOT multiplies signed bytes by signed bytes, so the weights need no
// offset, and the sums start at zero.

// W8SETUP: no constant.
#define W8SETUP

#define W8START VEOR V18.B16, V18.B16, V18.B16

// W8SUMS: eight packed vectors, one k-group each.
#define W8SUMS \
	KGROUP(16, 0, V0, 0); \
	KGROUP(16, 1, V1, 1); \
	KGROUP(16, 2, V0, 0); \
	KGROUP(16, 3, V1, 1); \
	KGROUP(17, 0, V0, 0); \
	KGROUP(17, 1, V1, 1); \
	KGROUP(17, 2, V0, 0); \
	KGROUP(17, 3, V1, 1)

// KGROUP adds k-group 4·(A−16)+J (the quarter's weights in the packed
// vector at (R14), times bytes 4J… of VA) to V18, loading through VR
// (register number W), and moves R14 to the next packed vector.
#define KGROUP(A, J, VR, W) \
	VLD1.P (R14)(R15), [VR.B16]; \
	SDOT(A, J, W, 18)

// func w8q8NEONDot(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·w8q8NEONDot(SB), NOSPLIT, $0-56
	Q8NEONDOT(W8SETUP, W8START, W8SUMS, 512, 576)
