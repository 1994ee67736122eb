package index

import (
	"context"
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
// would. It returns the file size after the first
// embedding and at the end. With compact, compaction may run after each
// cycle. The vault spans many of sqlite-vec's allocation chunks:
// a deleted vector's slot in a full chunk is never reused, so edits grow the
// file.
func editCycles(tb testing.TB, total, edited, cycles int, compact bool) (clean, final int64, rebuilt int) {
	tb.Helper()
	ctx := context.Background()
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
		if compact {
			_, did, err := s.CompactVectors(ctx, false)
			if err != nil {
				tb.Fatal(err)
			}
			if did {
				rebuilt++
			}
		}
	}
	return clean, size(), rebuilt
}

// sqlite-vec never reuses a deleted vector's slot; compaction keeps the file
// within 1.5x of its clean size over many edit cycles.
func TestVectorCompactionBoundsGrowth(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 30
	}
	clean, final, rebuilt := editCycles(t, 2500, 100, cycles, true)
	ratio := float64(final) / float64(clean)
	t.Logf("2500 notes, 100 edited x %d cycles: clean %d bytes, final %d bytes (%.2fx), %d compactions", cycles, clean, final, ratio, rebuilt)
	if rebuilt == 0 || ratio >= 1.5 {
		t.Fatalf("file grew %.2fx (%d -> %d bytes) with %d compactions, want < 1.5x", ratio, clean, final, rebuilt)
	}
}

func TestCompactionKeepsVectorsAndScope(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	mustApply(t, s, upserts(note("p/secret.md", "secret"), note("open.md", "open")))
	embedAll(t, s, func(text string) []float32 {
		if len(text) > 0 && text[0] == 's' {
			return []float32{1, 0, 0, 0}
		}
		return []float32{0, 1, 0, 0}
	})
	nBefore, digestBefore := vectorDigest(t, s)
	before, did, err := s.CompactVectors(ctx, true)
	if err != nil || !did || before.Live != 2 {
		t.Fatalf("CompactVectors: %+v %v %v", before, did, err)
	}
	nAfter, digestAfter := vectorDigest(t, s)
	if nBefore != nAfter || digestBefore != digestAfter {
		t.Fatal("compaction changed the vectors")
	}
	hits, err := s.SearchVector(ctx, []float32{1, 0, 0, 0}, 1, vault.ScopeOpen)
	if err != nil || len(hits) != 1 || hits[0].Path != "open.md" {
		t.Fatalf("open-only KNN after compaction: %v %v", paths(hits), err)
	}
	if mode := count(t, s, `PRAGMA auto_vacuum`); mode != 2 {
		t.Fatalf("auto_vacuum = %d, want 2 (incremental)", mode)
	}
}

// BenchmarkVectorFileGrowth reports the index file's growth over 100 edit
// cycles of 100 notes of a 2500-note vault, without and with compaction.
func BenchmarkVectorFileGrowth(b *testing.B) {
	for _, compact := range []bool{false, true} {
		b.Run(fmt.Sprintf("compact=%v", compact), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				clean, final, rebuilt := editCycles(b, 2500, 100, 100, compact)
				b.ReportMetric(float64(clean)/(1<<20), "clean-MiB")
				b.ReportMetric(float64(final)/(1<<20), "final-MiB")
				b.ReportMetric(float64(final)/float64(clean), "growth-x")
				b.ReportMetric(float64(rebuilt), "compactions")
			}
		})
	}
}
