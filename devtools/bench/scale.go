package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// scaleTarget is an index of the generated vault to build: with at least
// Notes notes, or at least Chunks chunks.
type scaleTarget struct{ Notes, Chunks int }

func (t scaleTarget) key() string {
	if t.Chunks > 0 {
		return fmt.Sprintf("chunks%d", t.Chunks)
	}
	return fmt.Sprintf("notes%d", t.Notes)
}

// scaleIndex is a built index.
type scaleIndex struct {
	Path          string
	Notes, Chunks int
}

// scaleManifest lists the cached scale indexes of one size and what built
// them.
type scaleManifest struct {
	GeneratorVersion string                `json:"generator_version"`
	SchemaVersion    string                `json:"schema_version"`
	Indexes          map[string]scaleIndex `json:"indexes"`
}

// schemaVersion is the index schema this code writes (its last
// migration's number), read from a new empty index.
func (r *run) schemaVersion(ctx context.Context) (string, error) {
	path := filepath.Join(r.work, "schema-probe.db")
	store, err := index.Open(ctx, index.Options{Path: path, Space: useLite.space, Logger: quiet})
	if err != nil {
		return "", err
	}
	st, err := store.Stats(ctx)
	if err := joinErr(err, store.Close()); err != nil {
		return "", err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	if st.SchemaVersion == "" {
		return "", errors.New("a new index records no schema version")
	}
	return st.SchemaVersion, nil
}

// scaleIndexes returns an index of the generated vault for each target,
// with pool vectors of model m (see poolEmbedder), from the cache when it
// has them (keyed by the generator's version, the index schema's and the
// model); otherwise it builds them all in one pass, the vault growing a
// batch at a time and each index a snapshot of it.
func (r *run) scaleIndexes(ctx context.Context, m *modelRun, targets []scaleTarget) (map[scaleTarget]scaleIndex, error) {
	schema, err := r.schemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(r.cfg.Cache, GeneratorVersion, "schema"+schema, m.name)
	manifest := filepath.Join(dir, "scale-"+r.cfg.Size+".json")
	out := map[scaleTarget]scaleIndex{}
	var cached scaleManifest
	if b, err := os.ReadFile(manifest); err == nil && json.Unmarshal(b, &cached) == nil &&
		cached.GeneratorVersion == GeneratorVersion && cached.SchemaVersion == schema {
		for _, t := range targets {
			if ix, ok := cached.Indexes[t.key()]; ok && exists(ix.Path) {
				out[t] = ix
			}
		}
		if len(out) == len(targets) {
			return out, nil
		}
	}
	pool, err := m.poolVectors(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf("building-%d.db", os.Getpid()))
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	open := func() (*index.Store, error) {
		return index.Open(ctx, index.Options{Path: tmp, Space: m.space,
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	}
	store, err := open()
	if err != nil {
		return nil, err
	}
	defer func() {
		if store != nil {
			_ = store.Close()
		}
	}()
	vec := vectorizer.New(store.Vectors(), poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, SliceChunks: 1000, Logger: quiet})
	apply := func(notes []vault.NoteInput) error {
		if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: notes}); err != nil {
			return err
		}
		_, err := vec.Drain(ctx)
		return err
	}
	left := slices.Clone(targets)
	// Stats counts by scanning the chunks table, so it is read only near a
	// target; in between, the chunks are estimated from the last ratio.
	ratio := 1.0
	batch := 500
	for _, t := range targets { // small enough to land near the smallest target
		if t.Notes > 0 {
			batch = min(batch, max(10, t.Notes/5))
		}
		if t.Chunks > 0 {
			batch = min(batch, max(10, t.Chunks/7))
		}
	}
	for n := 0; len(left) > 0; n += batch {
		notes := make([]vault.NoteInput, batch)
		for k := range notes {
			notes[k] = vault.NoteInput{Path: NotePath(n + k), Rev: "1", Text: NoteText(n + k)}
		}
		if err := apply(notes); err != nil {
			return nil, err
		}
		total := n + batch
		near := false
		for _, t := range left {
			near = near || (t.Chunks > 0 && float64(total)*ratio >= 0.97*float64(t.Chunks)) || (t.Chunks == 0 && total >= t.Notes)
		}
		if !near && n > 0 {
			continue
		}
		st, err := store.Stats(ctx)
		if err != nil {
			return nil, err
		}
		ratio = float64(st.Chunks) / float64(st.Notes)
		var still []scaleTarget
		for _, t := range left {
			if (t.Chunks > 0 && st.Chunks < t.Chunks) || (t.Chunks == 0 && total < t.Notes) {
				still = append(still, t)
				continue
			}
			var topics []vault.NoteInput
			for _, tn := range topicNotes(total) {
				topics = append(topics, vault.NoteInput{Path: tn.Path, Rev: fmt.Sprint(total), Text: tn.Text})
			}
			if err := apply(topics); err != nil {
				return nil, err
			}
			if st, err = store.Stats(ctx); err != nil {
				return nil, err
			}
			err = store.Close()
			store = nil
			if err != nil {
				return nil, err
			}
			path := filepath.Join(dir, fmt.Sprintf("scale-%s-%s.db", r.cfg.Size, t.key()))
			if err := copyFile(tmp, path); err != nil {
				return nil, err
			}
			out[t] = scaleIndex{Path: path, Notes: st.Notes, Chunks: st.Chunks}
			r.log.Info("built a scale index", keyNotes, st.Notes, keyChunks, st.Chunks)
			if store, err = open(); err != nil {
				return nil, err
			}
			vec = vectorizer.New(store.Vectors(), poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, SliceChunks: 1000, Logger: quiet})
		}
		left = still
	}
	built := scaleManifest{GeneratorVersion: GeneratorVersion, SchemaVersion: schema, Indexes: map[string]scaleIndex{}}
	for t, ix := range out {
		built.Indexes[t.key()] = ix
	}
	b, err := json.Marshal(built)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		return nil, err
	}
	if err := store.Close(); err != nil {
		return nil, err
	}
	store = nil
	return out, os.Remove(tmp)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
