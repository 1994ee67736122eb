package index

import (
	"context"
	"database/sql"
	"fmt"
	"os"
)

// Stats describes the index for `vaultask stats` and the status endpoint.
type Stats struct {
	Notes            int `json:"notes"`
	Chunks           int `json:"chunks"`
	Vectors          int `json:"vectors"`
	EmbeddingBacklog int `json:"embedding_backlog"`
	// EmbeddingStaged counts the chunks of the backlog already embedded,
	// whose vectors wait for the rest of their note's (see PutVectors).
	EmbeddingStaged int `json:"embedding_staged"`
	// OpenVectors, OpenEmbeddingBacklog and OpenEmbeddingStaged are
	// Vectors, EmbeddingBacklog and EmbeddingStaged over open chunks: what
	// a caller that sees open notes only is shown.
	OpenVectors          int `json:"open_vectors"`
	OpenEmbeddingBacklog int `json:"open_embedding_backlog"`
	OpenEmbeddingStaged  int `json:"open_embedding_staged"`
	OpenNotes            int `json:"open_notes"`
	PersonalNotes        int `json:"personal_notes"`
	OpenChunks           int `json:"open_chunks"`
	PersonalChunks       int `json:"personal_chunks"`
	LinksResolved        int `json:"links_resolved"`
	LinksUnresolved      int `json:"links_unresolved"`
	TopicEdges           int `json:"topic_edges"`
	TagEdges             int `json:"tag_edges"`
	PendingNotes         int `json:"pending_notes"`    // waiting for their chunks
	IncompleteNotes      int `json:"incomplete_notes"` // chunks still missing after the bound
	SkippedNotes         int `json:"skipped_notes"`    // documents the source does not index, with a reason`
	// EmbeddingModel and EmbeddingDim are those of the active embedding
	// space, the one searched; Vectors and OpenVectors count its vectors.
	// EmbeddingBacklog counts the chunks waiting for their vector in the
	// space the index embeds into: while it re-embeds, the new one.
	EmbeddingModel string `json:"embedding_model"`
	EmbeddingDim   int    `json:"embedding_dim"`
	// Reembedding is the index's progress into the configured embedding
	// space while it re-embeds (nil otherwise): searches use the active
	// space until every chunk has its vector in the new one.
	Reembedding   *Reembedding `json:"reembedding,omitempty"`
	SchemaVersion string       `json:"schema_version"`
	LastRun       string       `json:"last_run,omitempty"`
	FileBytes     int64        `json:"file_bytes"` // the file and its write-ahead log
}

// Reembedding is how far the index is into a new embedding space.
type Reembedding struct {
	Model    string `json:"model"` // the new space, model and dimension
	Embedded int    `json:"embedded"`
	Total    int    `json:"total"`
	// OpenEmbedded and OpenTotal count open chunks only.
	OpenEmbedded int `json:"open_embedded"`
	OpenTotal    int `json:"open_total"`
}

// Stats reads every count from one snapshot; the embedding model and
// dimension are the index's own, as recorded in it.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.read(ctx, "stats", func(tx *sql.Tx) error {
		counts := []struct {
			dst   *int
			query string
		}{
			{&st.Notes, `SELECT count(*) FROM docs`},
			{&st.OpenNotes, `SELECT count(*) FROM docs WHERE sensitivity = 'open'`},
			{&st.PersonalNotes, `SELECT count(*) FROM docs WHERE sensitivity = 'personal'`},
			{&st.Chunks, `SELECT count(*) FROM chunks`},
			{&st.OpenChunks, `SELECT count(*) FROM chunks WHERE sensitivity = 'open'`},
			{&st.PersonalChunks, `SELECT count(*) FROM chunks WHERE sensitivity = 'personal'`},
			{&st.EmbeddingBacklog, `SELECT count(*) FROM chunks WHERE embedded = 0`},
			{&st.OpenEmbeddingBacklog, `SELECT count(*) FROM chunks WHERE embedded = 0 AND sensitivity = 'open'`},
			{&st.EmbeddingStaged, `SELECT count(*) FROM chunks WHERE embedded = 0 AND staged IS NOT NULL`},
			{&st.OpenEmbeddingStaged, `SELECT count(*) FROM chunks WHERE embedded = 0 AND staged IS NOT NULL AND sensitivity = 'open'`},
			{&st.Vectors, `SELECT count(*) FROM vectors WHERE space = (SELECT id FROM spaces WHERE state = 'active')`},
			{&st.OpenVectors, `SELECT count(*) FROM vectors v JOIN chunks c INDEXED BY chunks_scope ON c.rowid = v.chunk
				WHERE v.space = (SELECT id FROM spaces WHERE state = 'active') AND c.sensitivity = 'open'`},
			{&st.LinksResolved, `SELECT count(*) FROM edges WHERE kind != 'tag' AND resolved = 1`},
			{&st.LinksUnresolved, `SELECT count(*) FROM edges WHERE kind != 'tag' AND resolved = 0`},
			{&st.TopicEdges, `SELECT count(*) FROM edges WHERE kind = 'topic'`},
			{&st.TagEdges, `SELECT count(*) FROM edges WHERE kind = 'tag'`},
			{&st.PendingNotes, `SELECT count(*) FROM note_status WHERE state = 'pending'`},
			{&st.IncompleteNotes, `SELECT count(*) FROM note_status WHERE state = 'incomplete'`},
			{&st.SkippedNotes, `SELECT count(*) FROM note_status WHERE state = 'skipped'`},
		}
		for _, c := range counts {
			if err := tx.QueryRowContext(ctx, c.query).Scan(c.dst); err != nil {
				return fmt.Errorf("%s: %w", c.query, err)
			}
		}
		spaces, err := readSpaces(ctx, tx)
		if err != nil {
			return err
		}
		st.EmbeddingModel, st.EmbeddingDim = spaces.active.space.Model, spaces.active.space.Dim
		if spaces.filling.id != 0 {
			st.Reembedding = &Reembedding{Model: spaces.filling.space.String(),
				Embedded: st.Chunks - st.EmbeddingBacklog, Total: st.Chunks,
				OpenEmbedded: st.OpenChunks - st.OpenEmbeddingBacklog, OpenTotal: st.OpenChunks}
		}
		if st.SchemaVersion, _, err = getMeta(ctx, tx, "schema_version"); err != nil {
			return err
		}
		st.LastRun, _, err = getMeta(ctx, tx, lastRunMeta)
		return err
	})
	if err != nil {
		return st, err
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.FileBytes += fi.Size()
		}
	}
	return st, nil
}
