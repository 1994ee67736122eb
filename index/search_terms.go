package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// TermRows counts, for each of terms, the chunks in scope whose searched
// text (any field) holds it, and the chunks in scope: what the coverage
// judgement weighs a question's words by. A term is a word, or with a
// trailing "*" a word's prefix; anything else in it is dropped as the
// tokenizer drops it. Counts are per scope, so the open scope's never
// depend on a personal note. They are remembered per state of the index,
// as SearchFTS's are.
func (s *Search) TermRows(ctx context.Context, terms []string, scope vault.Scope) (rows []int64, total int64, err error) {
	rows = make([]int64, len(terms))
	err = s.db.read(ctx, "count terms", func(tx *sql.Tx) error {
		var version []byte
		err := tx.QueryRowContext(ctx, `SELECT block FROM chunks_fts_data WHERE id = 10`).Scan(&version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read the full-text structure: %w", err)
		}
		from, key := `chunks_fts`, "all:"
		totalQuery := `SELECT count(*) FROM chunks`
		if scope.OpenOnly() {
			from, key = `chunks_fts JOIN chunks c INDEXED BY chunks_scope ON c.rowid = chunks_fts.rowid AND c.sensitivity = 'open'`, "open:"
			totalQuery = `SELECT count(*) FROM chunks INDEXED BY chunks_scope WHERE sensitivity = 'open'`
		}
		if total, err = s.db.ftsCounts.count(ctx, tx, version, key+tableRows, totalQuery); err != nil {
			return err
		}
		for i, t := range terms {
			phrase := termPhrase(t)
			if phrase == "" {
				continue
			}
			if rows[i], err = s.db.ftsCounts.count(ctx, tx, version, key+phrase, `SELECT count(*) FROM `+from+` WHERE chunks_fts MATCH ?`, phrase); err != nil {
				return err
			}
		}
		return nil
	})
	return rows, total, err
}

// termPhrase is term as an FTS5 phrase: its first word quoted, a prefix
// query when term ends in "*"; "" when term holds no word.
func termPhrase(term string) string {
	words := ftsWords(term)
	if len(words) == 0 {
		return ""
	}
	phrase := `"` + words[0] + `"`
	if len(term) > 0 && term[len(term)-1] == '*' {
		phrase += "*"
	}
	return phrase
}
