package simd

import (
	"math"
	"unsafe"
)

// The fp32 matrix products run on a register-blocked micro-kernel in the
// style of BLIS/GotoBLAS: the right-hand matrix is packed once into column
// panels of the kernel's width, and each kernel call computes an mr×NR tile
// of the product over the whole shared dimension. An encoder packs its
// weights at load, the small per-head attention matrices on the fly.

// mr is the number of rows of A (and C) one kernel call covers.
const mr = 6

// Kernel is one fp32 micro-kernel: its fn sets C[0:mr][0:NR] to
// max(C + A[0:mr][0:k]·P, floor), where P is one packed panel (k rows of NR
// floats) and A and C are row-major with row strides lda and ldc (in
// floats). A floor of 0 is a fused ReLU, -Inf none. Kernels lists those
// this CPU runs.
type Kernel struct {
	Name string // "avx512", "avx2", "neon" or "go"
	NR   int    // the panel width it takes
	fn   func(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
}

// Packed is a k×n matrix B stored as ceil(n/NR) panels of k rows of NR
// floats, zero-filled past column n, NR being the packing kernel's.
type Packed struct {
	k, n int
	data []float32
}

// Cols is n, the columns of B.
func (b Packed) Cols() int { return b.n }

// PackedLen is the number of floats a packed k×n matrix takes with panels
// nr wide: the length of PackRows' and PackCols' dst.
func PackedLen(k, n, nr int) int { return k * ((n + nr - 1) / nr * nr) }

func (kn Kernel) pack(k, n int, data []float32) Packed {
	return Packed{k: k, n: n, data: data[:PackedLen(k, n, kn.NR)]}
}

// PackRows packs B = src (k rows of n floats, row stride lds) into dst.
func (kn Kernel) PackRows(dst []float32, src []float32, lds, k, n int) Packed {
	b := kn.pack(k, n, dst)
	nr := kn.NR
	for p := 0; p*nr < n; p++ {
		cols := min(nr, n-p*nr)
		panel := b.data[p*k*nr : (p+1)*k*nr]
		for r := range k {
			row := panel[r*nr : (r+1)*nr]
			copy(row, src[r*lds+p*nr:r*lds+p*nr+cols])
			clear(row[cols:])
		}
	}
	return b
}

// PackCols packs B = srcᵀ, where src holds n rows of k floats (row stride
// lds), into dst: it is how the attention scores Q·Kᵀ take K.
func (kn Kernel) PackCols(dst []float32, src []float32, lds, k, n int) Packed {
	b := kn.pack(k, n, dst)
	nr := kn.NR
	for p := 0; p*nr < n; p++ {
		cols := min(nr, n-p*nr)
		panel := b.data[p*k*nr : (p+1)*k*nr]
		if cols < nr {
			clear(panel)
		}
		for j := range cols {
			col := src[(p*nr+j)*lds : (p*nr+j)*lds+k]
			for r, v := range col {
				panel[r*nr+j] = v
			}
		}
	}
	return b
}

// Tiles is per-worker scratch for the edges of a product, where fewer than
// six rows or NR columns are left.
type Tiles struct {
	a, c []float32 // mr × maxK and mr × nr
}

// NewTiles returns scratch for products of a shared dimension up to maxK on
// a kernel nr wide.
func NewTiles(maxK, nr int) Tiles {
	return Tiles{a: make([]float32, mr*maxK), c: make([]float32, mr*nr)}
}

// Gemm computes C[0:m][0:b.n] += A[0:m][0:b.k] · B, then clamps C at 0 when
// relu is set; B must be packed for kn. It works through the whole of k in
// each kernel call, so every element of C is final when the kernel stores
// it.
func (kn Kernel) Gemm(m int, a []float32, lda int, b Packed, c []float32, ldc int, relu bool, t Tiles) {
	if m == 0 || b.n == 0 {
		return
	}
	floor := float32(math.Inf(-1))
	if relu {
		floor = 0
	}
	k, nr := b.k, kn.NR
	for p := 0; p*nr < b.n; p++ {
		panel := &b.data[p*k*nr]
		cols := min(nr, b.n-p*nr)
		i := 0
		if cols == nr {
			for ; i+mr <= m; i += mr {
				kn.fn(k, &a[i*lda], lda, panel, &c[i*ldc+p*nr], ldc, floor)
			}
		}
		// The edges go through the tiles: the kernel always covers mr×NR.
		for ; i < m; i += mr {
			rows := min(mr, m-i)
			ap, apld := &a[i*lda], lda
			if rows < mr {
				clear(t.a[rows*k : mr*k])
				for r := range rows {
					copy(t.a[r*k:(r+1)*k], a[(i+r)*lda:(i+r)*lda+k])
				}
				ap, apld = &t.a[0], k
			}
			clear(t.c)
			kn.fn(k, ap, apld, panel, &t.c[0], nr, float32(math.Inf(-1)))
			for r := range rows {
				crow := c[(i+r)*ldc+p*nr : (i+r)*ldc+p*nr+cols]
				for j, v := range t.c[r*nr : r*nr+cols] {
					crow[j] = max(crow[j]+v, floor)
				}
			}
		}
	}
}

// goKernel is the portable kernel, used where no assembly kernel runs. Its
// 2×4 blocks fit the sixteen float registers of amd64.
var goKernel = Kernel{Name: "go", NR: 4, fn: kernelGo}

func kernelGo(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32) {
	as := unsafe.Slice(a, (mr-1)*lda+k)
	ps := unsafe.Slice(p, k*4)
	cs := unsafe.Slice(c, (mr-1)*ldc+4)
	for i := 0; i < mr; i += 2 {
		a0 := as[i*lda : i*lda+k]
		a1 := as[(i+1)*lda : (i+1)*lda+k]
		a1 = a1[:len(a0)]
		var c00, c01, c02, c03, c10, c11, c12, c13 float32
		for r, x0 := range a0 {
			x1 := a1[r]
			b := ps[r*4 : r*4+4 : r*4+4]
			b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
			c00 += x0 * b0
			c01 += x0 * b1
			c02 += x0 * b2
			c03 += x0 * b3
			c10 += x1 * b0
			c11 += x1 * b1
			c12 += x1 * b2
			c13 += x1 * b3
		}
		r0 := cs[i*ldc : i*ldc+4 : i*ldc+4]
		r1 := cs[(i+1)*ldc : (i+1)*ldc+4 : (i+1)*ldc+4]
		r0[0] = max(r0[0]+c00, floor)
		r0[1] = max(r0[1]+c01, floor)
		r0[2] = max(r0[2]+c02, floor)
		r0[3] = max(r0[3]+c03, floor)
		r1[0] = max(r1[0]+c10, floor)
		r1[1] = max(r1[1]+c11, floor)
		r1[2] = max(r1[2]+c12, floor)
		r1[3] = max(r1[3]+c13, floor)
	}
}
