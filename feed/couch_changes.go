package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptrace"
	"time"

	kivik "github.com/go-kivik/kivik/v4"
)

// feedRow is one _changes row.
type feedRow struct {
	id, seq string
	doc     json.RawMessage
}

// changes opens the continuous _changes feed from since and sends its rows
// to rows until it ends or ctx is done. opened is called once the request
// is written to a connection, and again when the server answers: CouchDB
// (and PouchDB's server) send a feed's headers with its first row or
// heartbeat, which on a quiet vault is a whole heartbeat later.
func (c *Couch) changes(ctx context.Context, since string, opened func(), rows chan<- feedRow) error {
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
		if w.Err == nil {
			opened()
		}
	}})
	ch := c.db.Changes(ctx, kivik.Params(map[string]any{
		"feed":         "continuous",
		"since":        since,
		"include_docs": true,
		"heartbeat":    int(c.heartbeat / time.Millisecond),
	}))
	defer ch.Close()
	if err := ch.Err(); err != nil {
		return fmt.Errorf("open changes feed: %w", err)
	}
	opened()
	return readChanges(ctx, ch, rows)
}

// readChanges sends the rows of one continuous feed to rows until it ends.
//
// kivik v4.5.2 panics inside Changes.Next when a continuous feed ends
// cleanly (it reads the last_seq of metadata that continuous feeds never
// have). Real CouchDB ends a feed that way on timeout or limit, and proxies
// close idle streams, so the panic is recovered here, in the only goroutine
// that calls Next, and reported as errFeedEnded: kivik's iterator releases
// its lock in a deferred unlock and the caller cancels the connection's
// context and closes the iterator, so nothing stays held. Keeping kivik
// (rather than parsing the stream by hand) keeps one HTTP, auth and error
// path for every request.
func readChanges(ctx context.Context, ch *kivik.Changes, rows chan<- feedRow) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (kivik: %v)", errFeedEnded, p)
		}
	}()
	// Iterator, unlike Changes.ScanDoc, does not read the iterator's state
	// unlocked while its context goroutine may be closing it.
	for change, err := range ch.Iterator() {
		if err != nil {
			return err
		}
		if change.ID == "" {
			continue // a final {"last_seq": …} line parses as a row without an id
		}
		var raw json.RawMessage
		if err := change.ScanDoc(&raw); err != nil || len(raw) == 0 || string(raw) == "null" {
			if !change.Deleted {
				return fmt.Errorf("a change (sequence %s) came without its document: %w", change.Seq, err) // no id: it is a note's path, and the error reaches /readyz
			}
			raw, _ = json.Marshal(map[string]any{"_id": change.ID, "_deleted": true})
		}
		select {
		case rows <- feedRow{id: change.ID, seq: change.Seq, doc: raw}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errFeedEnded
}
