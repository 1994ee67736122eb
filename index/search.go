package index

import "github.com/vaultask/vaultask/vault"

// ActiveSpace is the embedding space searches compare a question with: a
// query vector must be of it. While the index re-embeds into the
// configured space, it is the space the index was built in.
func (s *Search) ActiveSpace() vault.EmbeddingSpace { return s.db.spaces().active.space }

// hitColumns are the columns of a chunk and its note that every search
// returns, read from chunks c and docs d.
const hitColumns = `c.rowid, c.chunk_id, c.doc_id, d.path, d.title, c.ordinal, c.heading_path, c.prelude, c.body, c.sensitivity, c.embedded`

// hitFields points Scan at hitColumns followed by a score column.
func hitFields(h *vault.Chunk) []any {
	return []any{&h.RowID, &h.ChunkID, &h.DocID, &h.Path, &h.Title, &h.Ordinal, &h.HeadingPath, &h.Prelude, &h.Body, &h.Sensitivity, &h.Embedded, &h.Score}
}

// inTxQueries are the statements read transactions run prepared through
// stmtCache.in. They are prepared when the store opens: preparing one on
// the pool inside a transaction waits for a free connection, and when
// every connection is held by a transaction that waits the same way,
// none comes.
var inTxQueries = []string{metaSQL, hopsSQL, topicMembersSQL, rescoreSQL, hitsSQL, nearestHitsSQL, nearestCandidatesSQL, firstChunksSQL}
