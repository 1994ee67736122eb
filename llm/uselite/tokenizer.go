package uselite

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

const (
	// reservedPieces are the first vocab entries (unk, <s>, </s>, extra ids):
	// the TF.js tokenizer never matches them against text.
	reservedPieces = 6
	unkID          = 0
	// wordBoundary is SentencePiece's '▁', which stands for a space.
	wordBoundary = '\u2581'
)

// tokenizer is the unigram SentencePiece tokenizer of the TF.js Universal
// Sentence Encoder, reproduced quirk for quirk so that token ids match it.
type tokenizer struct {
	score []float64 // per piece: log-probability (0 when the vocab says null)
	// width is a piece's length as JavaScript's String.length counts it
	// (UTF-16 units): the TF.js backtracking steps by that, not by runes.
	width []int32
	// The trie of pieces: node 0 is the root, edges maps node<<32|rune to
	// the child node, and piece[node] is the piece ending there or -1.
	edges map[uint64]int32
	piece []int32
}

type vocabEntry struct {
	piece string
	score float64
}

func parseVocab(raw []byte) (*tokenizer, error) {
	var rows [][]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("vocab.json: %w", err)
	}
	entries := make([]vocabEntry, len(rows))
	for i, row := range rows {
		if len(row) != 2 {
			return nil, fmt.Errorf("vocab.json: entry %d has %d fields, want 2", i, len(row))
		}
		// A null score (some reserved pieces) reads as 0, as in JavaScript.
		var score *float64
		if err := json.Unmarshal(row[0], &entries[i].piece); err != nil {
			return nil, fmt.Errorf("vocab.json: entry %d: %w", i, err)
		}
		if err := json.Unmarshal(row[1], &score); err != nil {
			return nil, fmt.Errorf("vocab.json: entry %d: %w", i, err)
		}
		if score != nil {
			entries[i].score = *score
		}
	}
	if len(entries) <= reservedPieces {
		return nil, fmt.Errorf("vocab.json: %d entries, want more than %d", len(entries), reservedPieces)
	}
	// encode steps back over unk by its piece's width: it must not be 0.
	if entries[unkID].piece == "" {
		return nil, fmt.Errorf("vocab.json: the unk piece is empty")
	}
	t := &tokenizer{
		score: make([]float64, len(entries)),
		width: make([]int32, len(entries)),
		edges: make(map[uint64]int32, 4*len(entries)),
		piece: []int32{-1},
	}
	for id, e := range entries {
		t.score[id] = e.score
		for _, r := range e.piece {
			t.width[id] += int32(utf16.RuneLen(r))
		}
		if id < reservedPieces || e.piece == "" {
			continue
		}
		node := int32(0)
		for _, r := range e.piece {
			key := uint64(node)<<32 | uint64(uint32(r))
			child, ok := t.edges[key]
			if !ok {
				child = int32(len(t.piece))
				t.piece = append(t.piece, -1)
				t.edges[key] = child
			}
			node = child
		}
		// A piece listed twice keeps its last id, as the TF.js trie does.
		t.piece[node] = int32(id)
	}
	return t, nil
}

func (t *tokenizer) vocabSize() int { return len(t.score) }

// encode tokenizes s exactly as the TF.js USE tokenizer does: NFKC, each
// ' ' becomes '▁' and one '▁' is prefixed, then a Viterbi search over the
// pieces where an unmatched character is unk (id 0, score 0).
func (t *tokenizer) encode(s string) []int {
	s = norm.NFKC.String(s)
	if s == "" {
		return []int{}
	}
	syms := make([]rune, 0, len(s)+1)
	syms = append(syms, wordBoundary)
	for _, r := range s {
		if r == ' ' {
			r = wordBoundary
		}
		syms = append(syms, r)
	}
	n := len(syms)
	// best[e] is the score of the best segmentation of syms[:e] and word[e]
	// the piece ending it. TF.js treats best == 0 as "unset" and breaks ties
	// towards the later start (>=); starts are visited in increasing order,
	// as its lattice walk does, so the same piece wins every tie.
	best := make([]float64, n+1)
	word := make([]int32, n+1)
	relax := func(start, end int, id int32) {
		sc := t.score[id] + best[start]
		if best[end] == 0 || sc >= best[end] {
			best[end], word[end] = sc, id
		}
	}
	for start := range n {
		node, matched := int32(0), false
		for end := start; end < n; end++ {
			child, ok := t.edges[uint64(node)<<32|uint64(uint32(syms[end]))]
			if !ok {
				break
			}
			node = child
			if id := t.piece[node]; id >= 0 {
				relax(start, end+1, id)
				matched = true
			}
		}
		if !matched {
			relax(start, start+1, unkID)
		}
	}
	var ids []int
	for end := n; end > 0; end -= int(t.width[word[end]]) {
		id := int(word[end])
		// Runs of unknown characters collapse into one unk.
		if id == unkID && len(ids) > 0 && ids[len(ids)-1] == unkID {
			continue
		}
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	return ids
}

// normalizeSpace NFKC-normalises s and turns every run of white space into
// one ' ', trimming both ends: the tokenizer knows only ' ', so a tab or a
// newline would otherwise become unk and a run of spaces a run of '▁'.
func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(norm.NFKC.String(s)), " ")
}
