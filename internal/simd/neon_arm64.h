// The NEON instructions Go's assembler lacks, for the arm64 kernels
// (dots_arm64.s, gemm_arm64.s, q4q8_arm64.s, w8q8_arm64.s): encoded here,
// with register numbers as operands (d the destination).

// SMULL Vd.8H, Vn.8B, Vm.8B; SMLAL2 Vd.8H, Vn.16B, Vm.16B; SADALP Vd.4S, Vn.8H.
#define SMULL8B(m, n, d) WORD $(0x0e20c000 | (m)<<16 | (n)<<5 | (d))
#define SMLAL216B(m, n, d) WORD $(0x4e208000 | (m)<<16 | (n)<<5 | (d))
#define SADALP8H(n, d) WORD $(0x4e606800 | (n)<<5 | (d))

// SDOT Vd.4S, Vn.16B, Vm.4B[idx] (the dot-product extension).
#define SDOT(m, idx, n, d) WORD $(0x4f80e000 | ((idx)&1)<<21 | ((idx)>>1)<<11 | (m)<<16 | (n)<<5 | (d))

// SCVTF Vd.4S, Vn.4S; FMUL, FADD and FMAX Vd.4S, Vn.4S, Vm.4S; FMLA Vd.4S, Vn.4S, Vm.S[0].
#define SCVTF4S(n, d) WORD $(0x4e21d800 | (n)<<5 | (d))
#define FMUL4S(m, n, d) WORD $(0x6e20dc00 | (m)<<16 | (n)<<5 | (d))
#define FADD4S(m, n, d) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))
#define FMAX4S(m, n, d) WORD $(0x4e20f400 | (m)<<16 | (n)<<5 | (d))
#define FMLA4S0(m, n, d) WORD $(0x4f801000 | (m)<<16 | (n)<<5 | (d))
