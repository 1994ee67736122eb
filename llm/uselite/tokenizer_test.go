package uselite

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func FuzzTokenize(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join(modelDir(), "vocab.json"))
	if err != nil {
		f.Fatalf("%v\nThe tests need the model: run vaultask fetch-model (or set VAULTASK_MODELS__BUILTIN_DIR).", err)
	}
	tok, err := parseVocab(raw)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range mustReference(f).Inputs {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid UTF-8 \xc3")
	f.Add("ﬁ ligature, full-width ＡＢＣ, ½ and ⁵")
	f.Fuzz(func(t *testing.T, s string) {
		for _, ids := range [][]int{tok.encode(s), tok.encode(normalizeSpace(s))} {
			for _, id := range ids {
				if id < 0 || id >= tok.vocabSize() {
					t.Fatalf("encode(%q): id %d outside the vocab of %d", s, id, tok.vocabSize())
				}
			}
		}
		if normalizeSpace(s) != "" && len(tok.encode(normalizeSpace(s))) == 0 {
			t.Errorf("encode(%q): no tokens for non-blank text", s)
		}
		if !utf8.ValidString(normalizeSpace(s)) && utf8.ValidString(s) {
			t.Errorf("normalizeSpace(%q) made valid UTF-8 invalid", s)
		}
	})
}
