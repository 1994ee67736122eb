package index

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
)

// The rescore's distance in Go is sqlite-vec's vec_distance_cosine, bit for
// bit, on vectors of every shape the rescore meets (unit, clustered, far
// from unit norm, spiky, with zeros): so the ranks of the SQL rescore it
// replaced, ties included, and its scores, are unchanged.
func TestCosineDistanceIsSQLiteVecs(t *testing.T) {
	s := mustOpen(t, Options{Space: space512})
	r := rand.New(rand.NewPCG(8, 9))
	shapes := map[string]func(i int) []float32{
		"unit":      unitVector,
		"clustered": clustered,
		"scaled": func(i int) []float32 {
			v := clustered(i)
			for j := range v {
				v[j] *= 1e4
			}
			return v
		},
		"spiky": func(i int) []float32 {
			v := make([]float32, 512)
			for j := range v {
				v[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
			}
			return v
		},
		"sparse": func(i int) []float32 {
			v := make([]float32, 512)
			for j := range 20 {
				v[(i*31+j*17)%512] = float32(r.NormFloat64())
			}
			return v
		},
	}
	for name, shape := range shapes {
		for i := range 200 {
			a, b := shape(i), shape(i+1000)
			var want float64
			if err := s.reader.QueryRow(`SELECT vec_distance_cosine(?, ?)`, encodeVector(a), encodeVector(b)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got := vectorset.CosineDistance(a, b); got != want {
				t.Fatalf("%s %d: CosineDistance %v, vec_distance_cosine %v", name, i, got, want)
			}
		}
	}
}

// A query vector of another embedding space than the index's, or of its
// model but another dimension, is refused by every search that takes one,
// never compared with vectors it has nothing to do with.
func TestQueryOfAnotherSpaceRefused(t *testing.T) {
	ctx := context.Background()
	s := clusteredStore(t, "", 20)
	mustShortlist(t, s)
	other := vault.QueryVector{Space: vault.EmbeddingSpace{Model: "test/other", Dim: 512}, Values: clustered(1)}
	short := vault.QueryVector{Space: s.space, Values: clustered(1)[:256]}
	for name, q := range map[string]vault.QueryVector{"another model": other, "another dimension": short} {
		if _, err := s.Search().SearchVector(ctx, q, 5, vault.ScopeAll); err == nil {
			t.Errorf("SearchVector, %s: no error", name)
		}
		if _, err := s.Search().SearchVectorExact(ctx, q, 5, vault.ScopeAll); err == nil {
			t.Errorf("SearchVectorExact, %s: no error", name)
		}
		if _, err := s.Search().DistanceBounds(ctx, []string{"open/n0001.md"}, q, vault.ScopeAll); err == nil {
			t.Errorf("DistanceBounds, %s: no error", name)
		}
		if _, _, err := s.Search().NearestChunks(ctx, []string{"open/n0001.md"}, q, vault.ScopeAll); err == nil {
			t.Errorf("NearestChunks, %s: no error", name)
		}
	}
	if _, err := s.Search().SearchVector(ctx, other, 5, vault.ScopeAll); !errors.Is(err, vault.ErrOtherSpace) {
		t.Fatalf("SearchVector of another model: %v, want vault.ErrOtherSpace", err)
	}
}
