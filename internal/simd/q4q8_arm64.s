#include "textflag.h"
#include "neon_arm64.h"
#include "q8_arm64.h"

// The Q4×Q8 kernel with NEON's SDOT: q8_arm64.h's loops, the weights
// nibbles (0–15) and each row's sum starting at its offset −8·Σq (see
// q4q8_amd64.s).

// Q4SETUP puts the nibble mask in V19.
#define Q4SETUP \
	MOVD $0x0f0f0f0f0f0f0f0f, R13; \
	VDUP R13, V19.D2

// Q4START starts the sums at the row's offset.
#define Q4START \
	MOVWU 32(R11), R13; \
	VDUP  R13, V18.S4

// Q4SUMS: four packed vectors, each two k-groups.
#define Q4SUMS \
	KGROUPS(0); \
	KGROUPS(1); \
	KGROUPS(2); \
	KGROUPS(3)

// KGROUPS adds k-groups J (low nibbles of the packed vector at (R14),
// times bytes 4J… of V16) and J+4 (high nibbles, times bytes 4J… of V17)
// to V18, and moves R14 to the next packed vector.
#define KGROUPS(J) \
	VLD1.P  (R14)(R15), [V0.B16]; \
	VUSHR   $4, V0.B16, V1.B16; \
	VAND    V19.B16, V0.B16, V0.B16; \
	SDOT(16, J, 0, 18); \
	SDOT(17, J, 1, 18)

// func q4q8NEONDot(w *byte, a *byte, nb int, tiles int, y *float32, ldy int, bias *float32)
TEXT ·q4q8NEONDot(SB), NOSPLIT, $0-56
	Q8NEONDOT(Q4SETUP, Q4START, Q4SUMS, 256, 320)
