package index

import "github.com/vaultask/vaultask/vault"

// hitColumns are the columns of a chunk and its note that every search
// returns, read from chunks c and docs d.
const hitColumns = `c.rowid, c.chunk_id, c.doc_id, d.path, d.title, c.ordinal, c.heading_path, c.prelude, c.body, c.sensitivity, c.embedded`

// hitFields points Scan at hitColumns followed by a score column.
func hitFields(h *vault.Chunk) []any {
	return []any{&h.RowID, &h.ChunkID, &h.DocID, &h.Path, &h.Title, &h.Ordinal, &h.HeadingPath, &h.Prelude, &h.Body, &h.Sensitivity, &h.Embedded, &h.Score}
}
