package index

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// The shortlist finds what brute force finds when it may rescore every
// candidate, keeps personal chunks out of an open search, and loses little
// with a short list on vectors with structure.
func TestShortlistMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Space: EmbeddingSpace{Model: "test/seeded", Dim: 512}, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	var notes []vault.NoteInput
	for i := range 300 {
		dir := "open"
		if i%5 == 0 {
			dir = "p"
		}
		notes = append(notes, note(fmt.Sprintf("%s/n%03d.md", dir, i), fmt.Sprintf("note %d", i)))
	}
	mustApply(t, s, upserts(notes...))
	// Ten clusters of vectors, so that near means something.
	vecOf := func(i int) []float32 {
		v := unitVector(1000 + i%10)
		w := unitVector(i)
		for d := range v {
			v[d] = v[d] + 0.3*w[d]
		}
		var norm float64
		for _, x := range v {
			norm += float64(x * x)
		}
		for d := range v {
			v[d] /= float32(math.Sqrt(norm))
		}
		return v
	}
	embedAll(t, s, func(text string) []float32 { return vecOf(numberAtEnd(text)) })
	if n, err := s.BuildShortlist(ctx); err != nil || n != 300 {
		t.Fatalf("BuildShortlist = %d, %v", n, err)
	}
	q := vecOf(7)
	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
		brute, err := s.SearchVector(ctx, q, 10, scope)
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.SearchVectorShortlist(ctx, q, 10, 300, scope)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(paths(all)) != fmt.Sprint(paths(brute)) {
			t.Errorf("scope %d: shortlist of everything %v, brute force %v", scope, paths(all), paths(brute))
		}
		short, err := s.SearchVectorShortlist(ctx, q, 10, 40, scope)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, h := range brute {
			want[h.Path] = true
		}
		got := 0
		for _, h := range short {
			if want[h.Path] {
				got++
			}
			if scope == vault.ScopeOpen && h.Sensitivity != vault.SensitivityOpen {
				t.Errorf("open shortlist search found %s (%s)", h.Path, h.Sensitivity)
			}
		}
		if got < 8 {
			t.Errorf("scope %d: a shortlist of 40 kept %d of brute force's top 10", scope, got)
		}
	}
}

// numberAtEnd is N of a chunk text ending "note N".
func numberAtEnd(text string) int {
	j := strings.TrimRightFunc(text, func(r rune) bool { return r >= '0' && r <= '9' })
	n, _ := strconv.Atoi(text[len(j):])
	return n
}
