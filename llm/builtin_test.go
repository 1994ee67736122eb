package llm

import (
	"slices"
	"strings"
	"testing"
)

// TestBuiltinModels: each built-in model's spec is whole, and names of its
// own: its short name, id, folder and family (the table of other models
// must not know it a second time).
func TestBuiltinModels(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range builtinModels {
		family := familyOf(s.ID)
		for _, name := range []string{"name " + s.Name, "id " + s.ID, "folder " + s.Dir, "family " + family} {
			if seen[name] {
				t.Errorf("two built-in models have the %s", name)
			}
			seen[name] = true
		}
		if !strings.HasPrefix(s.ID, "builtin/") || s.Name == "" || s.Dir == "" || s.Dim <= 0 || s.Open == nil || s.Coverage == "" || s.Distances == (Distances{}) {
			t.Errorf("%s: the spec is not whole: %+v", s.ID, *s)
		}
		if !strings.HasPrefix(s.Source.URL, "https://") || len(s.Source.Dirs) == 0 {
			t.Errorf("%s: the fetch has no source: %+v", s.ID, s.Source)
		}
		for _, f := range s.Files {
			if !slices.Contains(s.Sums.Names(), f) {
				t.Errorf("%s reads %s, which its checksums.txt does not pin", s.ID, f)
			}
		}
		for _, k := range knownEmbeddingModels {
			if k.family == family {
				t.Errorf("%s: the table knows its family a second time", s.ID)
			}
		}
		if got := builtinSpec(s.ID); got != s {
			t.Errorf("builtinSpec(%s) = %v", s.ID, got)
		}
	}
	if builtinSpec("builtin/multilingual-e5-small:latest") != nil {
		t.Error("a tagged id is taken for a built-in model's")
	}
}
