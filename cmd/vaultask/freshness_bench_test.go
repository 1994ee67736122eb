package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/fakellm"
)

// BenchmarkWriteToEvent is how long a note written through LiveSync takes
// to reach /events through `vaultask serve` (the test CouchDB, the real
// follower and index, the built-in embedder): what /chat's freshness
// indicator waits on, which tests/clients/chat.test.mjs no longer bounds by
// the clock. Each op writes a new note and waits for its event.
//
//	go test -tags sqlite_fts5 -run '^$' -bench WriteToEvent -benchtime 20x ./cmd/vaultask/
func BenchmarkWriteToEvent(b *testing.B) {
	srv, db, lp := serveVault(b)
	up := fakellm.New()
	b.Cleanup(up.Close)
	s := startServe(b, serveEnv(b, srv, db, up))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/events", nil)
	if err != nil {
		b.Fatal(err)
	}
	events, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer events.Body.Close()
	seen := make(chan string, 64)
	go func() {
		defer close(seen)
		sc := bufio.NewScanner(events.Body)
		for sc.Scan() {
			seen <- sc.Text()
		}
	}()
	i := 0
	for b.Loop() {
		path := fmt.Sprintf("Recipes/Bench %04d.md", i)
		i++
		if err := lp.Put(ctx, path, "# Bench\n\nA note written to time its event.\n", true); err != nil {
			b.Fatal(err)
		}
		for found := false; !found; {
			select {
			case line, ok := <-seen:
				if !ok {
					b.Fatal("/events ended")
				}
				found = strings.Contains(line, path)
			case <-time.After(30 * time.Second):
				b.Fatalf("no event for %s within 30 s", path)
			}
		}
	}
}
