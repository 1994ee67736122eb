package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	kivik "github.com/go-kivik/kivik/v4"
)

// keysBatch bounds the ids of one POST _all_docs {"keys": […]} (FORMAT.md §8
// suggests 100–250).
const keysBatch = 200

// getRaw GETs one document; a missing one is nil without error.
func (c *Couch) getRaw(ctx context.Context, id string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.db.Get(ctx, id).ScanDoc(&raw)
	if kivik.HTTPStatus(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", id, err)
	}
	return raw, nil
}

// fetch gets documents by id with POST _all_docs?include_docs=true
// {"keys": […]}, in batches. Ids that are missing or deleted are absent from
// the result.
func (c *Couch) fetch(ctx context.Context, ids []string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(ids))
	for start := 0; start < len(ids); start += keysBatch {
		keys := ids[start:min(start+keysBatch, len(ids))]
		rs := c.db.AllDocs(ctx, kivik.Params(map[string]any{"include_docs": true, "keys": keys}))
		for rs.Next() {
			id, err := rs.ID()
			if err != nil || id == "" {
				continue // a not_found row
			}
			var raw json.RawMessage
			if rs.ScanDoc(&raw) != nil || len(raw) == 0 || string(raw) == "null" {
				continue // a deleted document: no body
			}
			out[id] = raw
		}
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("fetch %d documents by key: %w", len(keys), err)
		}
		rs.Close()
	}
	return out, nil
}

// currentRevs looks up the current revision of each of ids with
// POST _all_docs {"keys": […]} (no documents): a missing or deleted
// document has none and is absent from the result.
func (c *Couch) currentRevs(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for start := 0; start < len(ids); start += keysBatch {
		keys := ids[start:min(start+keysBatch, len(ids))]
		rs := c.db.AllDocs(ctx, kivik.Params(map[string]any{"keys": keys}))
		for rs.Next() {
			var v struct {
				Rev     string `json:"rev"`
				Deleted bool   `json:"deleted"`
			}
			id, err := rs.ID()
			if err != nil || id == "" || rs.ScanValue(&v) != nil || v.Deleted || v.Rev == "" {
				continue // a not_found or deleted row
			}
			out[id] = v.Rev
		}
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("look up %d revisions: %w", len(keys), err)
		}
		rs.Close()
	}
	return out, nil
}

// listPage lists one _all_docs page of at most limit documents with their
// bodies, from the first id after after ("" from the start), handing each
// to take. It returns how many it listed, the last of them, and the
// database's total_rows (-1 when the server does not say).
func (c *Couch) listPage(ctx context.Context, after string, limit int, take func(id string, raw json.RawMessage) error) (n int, last string, total int, err error) {
	params := map[string]any{"include_docs": true, "limit": limit}
	if after != "" {
		params["startkey"], params["skip"] = after, 1
	}
	rs := c.db.AllDocs(ctx, kivik.Params(params))
	defer rs.Close()
	for rs.Next() {
		id, err := rs.ID()
		if err != nil {
			return n, last, -1, fmt.Errorf("list documents: %w", err)
		}
		var raw json.RawMessage
		if err := rs.ScanDoc(&raw); err != nil {
			return n, last, -1, fmt.Errorf("list documents: %s: %w", id, err)
		}
		n, last = n+1, id
		if err := take(id, raw); err != nil {
			return n, last, -1, err
		}
	}
	if err := rs.Err(); err != nil {
		return n, last, -1, fmt.Errorf("list documents: %w", err)
	}
	total = -1
	if md, err := rs.Metadata(); err == nil {
		total = int(md.TotalRows)
	}
	return n, last, total, nil
}

// liveIDs lists, from _changes since the start, the ids of the documents
// that are not deleted, leaving out those in known.
func (c *Couch) liveIDs(ctx context.Context, known map[string]bool) ([]string, error) {
	ch := c.db.Changes(ctx, kivik.Params(map[string]any{"since": "0"}))
	defer ch.Close()
	var ids []string
	for ch.Next() {
		if id := ch.ID(); id != "" && !ch.Deleted() && !known[id] {
			ids = append(ids, id)
		}
	}
	if err := ch.Err(); err != nil {
		return nil, fmt.Errorf("list ids from _changes: %w", err)
	}
	return ids, nil
}
