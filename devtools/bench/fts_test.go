package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
)

var (
	ftsIndex  = flag.String("fts.index", "", "index for BenchmarkSearchFTS, built there when missing (default: in the user's cache dir)")
	ftsChunks = flag.Int("fts.chunks", 100_000, "chunks of the generated vault BenchmarkSearchFTS searches")
)

// BenchmarkSearchFTS times the full-text arm alone, as the pipeline calls
// it (rag.FTSText, the default top k and field weights), on the generated
// vault grown to -fts.chunks chunks without vectors, so it builds in a
// minute or two and is cached. The generated questions are of common
// words only (the vocabulary is small: each word is in 2% to 95% of the
// chunks); the selective ones add a number that names one note. "warm"
// searches a store that has already searched every question (the words'
// counts kept, as between two writes); "uncounted" opens the store anew
// for each search, as the first search after a write finds it.
func BenchmarkSearchFTS(b *testing.B) {
	ctx := context.Background()
	path, err := ftsBenchIndex(ctx, *ftsChunks)
	if err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B) *index.Store {
		store, err := index.Open(ctx, index.Options{Path: path, Space: useLite.space, ReadOnly: true,
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		return store
	}
	store := open(b)
	b.Cleanup(func() { _ = store.Close() })
	st, err := store.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s := settings()
	search := func(b *testing.B, store *index.Store, text string, scope vault.Scope) {
		hits, err := store.Search().SearchFTS(ctx, text, s.FTSTopK, scope, s.FTSFields)
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) == 0 {
			b.Fatalf("no hit for %q", text)
		}
	}
	common := Questions(50)
	var selective []string
	for i, q := range common {
		selective = append(selective, fmt.Sprintf("%s %d", q, (i*7919+13)%st.Notes))
	}
	for _, c := range []struct {
		name string
		qs   []string
	}{{"common", common}, {"selective", selective}} {
		texts := make([]string, len(c.qs))
		for i, q := range c.qs {
			texts[i] = rag.FTSText(q)
		}
		for _, scope := range []struct {
			name  string
			scope vault.Scope
		}{{"all", vault.ScopeAll}, {"open", vault.ScopeOpen}} {
			b.Run(fmt.Sprintf("chunks=%d/%s/warm/%s", st.Chunks, c.name, scope.name), func(b *testing.B) {
				for _, text := range texts {
					search(b, store, text, scope.scope)
				}
				i := 0
				for b.Loop() {
					search(b, store, texts[i%len(texts)], scope.scope)
					i++
				}
			})
		}
		b.Run(fmt.Sprintf("chunks=%d/%s/uncounted/all", st.Chunks, c.name), func(b *testing.B) {
			i := 0
			for b.Loop() {
				b.StopTimer()
				fresh := open(b)
				b.StartTimer()
				search(b, fresh, texts[i%len(texts)], vault.ScopeAll)
				b.StopTimer()
				if err := fresh.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				i++
			}
		})
	}
}

// ftsBenchIndex is the path of an index of the generated vault with at
// least chunks chunks and no vectors, built when it is not there yet.
func ftsBenchIndex(ctx context.Context, chunks int) (string, error) {
	path := *ftsIndex
	if path == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, "vaultask-bench", GeneratorVersion, fmt.Sprintf("fts-%d.db", chunks))
	}
	if exists(path) {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp := path + ".building"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	store, err := index.Open(ctx, index.Options{Path: tmp, Space: useLite.space,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return "", err
	}
	n, batch := 0, 1000
	for {
		st, err := store.Stats(ctx)
		if err != nil {
			return "", joinErr(err, store.Close())
		}
		if st.Chunks >= chunks {
			break
		}
		notes := make([]vault.NoteInput, batch)
		for k := range notes {
			notes[k] = vault.NoteInput{Path: NotePath(n + k), Rev: "1", Text: NoteText(n + k)}
		}
		if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: notes}); err != nil {
			return "", joinErr(err, store.Close())
		}
		n += batch
	}
	var topics []vault.NoteInput
	for _, tn := range topicNotes(n) {
		topics = append(topics, vault.NoteInput{Path: tn.Path, Rev: "1", Text: tn.Text})
	}
	if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: topics}); err != nil {
		return "", joinErr(err, store.Close())
	}
	if err := store.Close(); err != nil {
		return "", err
	}
	if err := os.Remove(tmp + ".lock"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
