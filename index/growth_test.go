package index

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// unitVector is a deterministic 512-d vector for a seed.
func unitVector(seed int) []float32 {
	v := make([]float32, 512)
	var norm float64
	for i := range v {
		x := math.Sin(float64(seed*7919 + i*104729))
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// seeded hands out unit vectors of seeds 1, 2, 3, …: every vector
// different, as a real model's for edited texts are.
type seeded struct{ seed int }

func (e *seeded) next(string) []float32 {
	e.seed++
	return unitVector(e.seed)
}

// editCycles indexes a vault of total notes and embeds it, then edits a
// different run of edited notes in each of cycles cycles (rotating through
// the vault), re-embedding after each cycle as the follower and vectorizer
// would. It returns the file size after the first embedding and at the end.
func editCycles(tb testing.TB, total, edited, cycles int) (clean, final int64) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "growth.db")
	s := mustOpen(tb, Options{Path: path, Space: vault.EmbeddingSpace{Model: "test/seeded", Dim: 512}})
	emb := &seeded{}
	batch := func(first, notes, rev int) Batch {
		var b Batch
		for k := 0; k < notes; k++ {
			i := (first + k) % total
			b.Upserts = append(b.Upserts, vault.NoteInput{Path: fmt.Sprintf("n%04d.md", i), Rev: fmt.Sprint(rev), Text: fmt.Sprintf("note %d revision %d", i, rev)})
		}
		return b
	}
	size := func() int64 {
		if _, err := s.writer.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			tb.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			tb.Fatal(err)
		}
		return fi.Size()
	}
	mustApply(tb, s, batch(0, total, 0))
	embedAll(tb, s, emb.next)
	clean = size()
	for c := 1; c <= cycles; c++ {
		mustApply(tb, s, batch(c*edited, edited, c))
		embedAll(tb, s, emb.next)
	}
	return clean, size()
}

// A deleted vector's row frees its page for the next: the file stays
// within 1.2x of its clean size over many edit cycles, with nothing to
// compact (sqlite-vec's vec0, which never reused a deleted vector's slot,
// needed a compaction to stay within 1.5x).
func TestVectorEditsReuseSpace(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 30
	}
	clean, final := editCycles(t, 2500, 100, cycles)
	ratio := float64(final) / float64(clean)
	t.Logf("2500 notes, 100 edited x %d cycles: clean %d bytes, final %d bytes (%.2fx)", cycles, clean, final, ratio)
	if ratio >= 1.2 {
		t.Fatalf("file grew %.2fx (%d -> %d bytes), want < 1.2x", ratio, clean, final)
	}
}

// BenchmarkVectorFileGrowth reports the index file's growth over 100 edit
// cycles of 100 notes of a 2500-note vault.
func BenchmarkVectorFileGrowth(b *testing.B) {
	for i := 0; i < b.N; i++ {
		clean, final := editCycles(b, 2500, 100, 100)
		b.ReportMetric(float64(clean)/(1<<20), "clean-MiB")
		b.ReportMetric(float64(final)/(1<<20), "final-MiB")
		b.ReportMetric(float64(final)/float64(clean), "growth-x")
	}
}
