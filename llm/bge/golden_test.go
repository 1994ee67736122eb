package bge

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// golden is testdata/golden.json.gz, written by
// scripts/reference/bge-golden.sh: texts named by their place in the
// LiveSync corpora (or, for kind "synthetic", stored), with Hugging Face
// tokenizers' ids and onnxruntime's vectors.
type golden struct {
	MadeBy string `json:"made_by"`
	Texts  []struct {
		Corpus, ID, Kind, Prefix, SHA256 string
		Text                             string `json:"text"`
		Tokens                           string `json:"tokens"`
		Vector                           string `json:"vector_f16"`
	} `json:"texts"`
}

// goldenText is one reference text, read back from the corpus.
type goldenText struct {
	name   string
	text   string    // with its prefix (the query prefix for titles)
	tokens []int     // content ids, without [CLS] and [SEP]
	vec    []float32 // nil for a text past 512 tokens: tokens only
}

var loadGolden = sync.OnceValues(func() ([]goldenText, error) {
	g, err := readGoldenFile("testdata/golden.json.gz")
	if err != nil {
		return nil, err
	}
	docs := map[string]map[string]corpustext.Doc{}
	out := make([]goldenText, 0, len(g.Texts))
	for _, e := range g.Texts {
		text := e.Text
		if e.Kind != "synthetic" {
			if docs[e.Corpus] == nil {
				if docs[e.Corpus], err = corpustext.Read(filepath.Join(corpustext.Dir(), e.Corpus)); err != nil {
					return nil, err
				}
			}
			if text, err = corpustext.Text(docs[e.Corpus], e.Kind, e.ID); err != nil {
				return nil, err
			}
		}
		if sum := sha256.Sum256([]byte(text)); hex.EncodeToString(sum[:]) != e.SHA256 {
			return nil, fmt.Errorf("%s %s: the text's sha256 differs from the golden file's: the corpus changed; run %s", e.Corpus, e.ID, g.MadeBy)
		}
		gt := goldenText{name: e.Corpus + " " + e.Kind + " " + e.ID, text: e.Prefix + text}
		if gt.tokens, err = uvarints(e.Tokens); err != nil {
			return nil, fmt.Errorf("%s: tokens: %w", gt.name, err)
		}
		if gt.vec, err = halfs(e.Vector); err != nil {
			return nil, fmt.Errorf("%s: vector_f16: %w", gt.name, err)
		}
		out = append(out, gt)
	}
	return out, nil
})

func readGoldenFile(file string) (*golden, error) {
	f, err := os.Open(file)
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
	return &g, nil
}

// uvarints decodes base64 unsigned varints.
func uvarints(b64 string) ([]int, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	var ids []int
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("a varint is cut short")
		}
		ids, b = append(ids, int(v)), b[n:]
	}
	return ids, nil
}

// halfs decodes base64 little-endian float16s; "" is nil.
func halfs(b64 string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	v := make([]float32, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		v = append(v, simd.HalfToFloat(binary.LittleEndian.Uint16(b[i:])))
	}
	return v, nil
}

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

// TestGoldenTokens compares the tokenizer's ids with Hugging Face
// tokenizers' on every golden text (prefix included), exactly.
func TestGoldenTokens(t *testing.T) {
	g := mustGolden(t)
	tok := mustTokenizer(t)
	bad := 0
	for _, gt := range g {
		if got := tok.encode(gt.text); !slices.Equal(got, gt.tokens) {
			bad++
			i := 0
			for i < min(len(got), len(gt.tokens)) && got[i] == gt.tokens[i] {
				i++
			}
			t.Errorf("%s: %d ids, tokenizers %d; first difference at %d: %v vs %v", gt.name, len(got), len(gt.tokens), i,
				got[i:min(len(got), i+5)], gt.tokens[i:min(len(gt.tokens), i+5)])
		}
	}
	t.Logf("%d of %d texts tokenized exactly as Hugging Face tokenizers does", len(g)-bad, len(g))
}

// TestGoldenVectors embeds every golden text within 512 tokens in one call
// and requires a cosine of at least 0.99 to onnxruntime's fp32 vector for
// each; the log has the min and mean. Under the race detector, which slows
// the scalar code tenfold, it takes every eighth text.
func TestGoldenVectors(t *testing.T) {
	var g []goldenText
	for _, gt := range mustGolden(t) {
		if gt.vec != nil {
			g = append(g, gt)
		}
	}
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
	least, mean := corpustext.CheckVectors(t, names, vecs, want, 0.99, "onnxruntime")
	t.Logf("kernel %s, %d texts: cosine to onnxruntime min %.6f, mean %.6f", simd.W8Q8Kernel(), len(g), least, mean)
}
