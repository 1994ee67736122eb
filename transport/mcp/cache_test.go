package mcp

import (
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// The cache holds at most max sessions, dropping the least recently used,
// and drops a session unused for idle; a use keeps it.
func TestSessionCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var dropped []string
		c := newSessionCache(3, time.Minute, func(id string) {
			mu.Lock()
			defer mu.Unlock()
			dropped = append(dropped, id)
		}, quietLog())
		droppedNow := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(dropped)
		}
		for _, id := range []string{"a", "b", "c"} {
			c.add(id)
		}
		c.touch("a")
		c.add("d")
		if got := droppedNow(); !slices.Equal(got, []string{"b"}) || c.len() != 3 {
			t.Fatalf("after a fourth session: dropped %v, %d held; want b, the least recently used, and 3", got, c.len())
		}
		c.remove("c") // mcp-go let it go (a DELETE)
		time.Sleep(40 * time.Second)
		c.touch("d")
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := droppedNow(); !slices.Equal(got, []string{"b", "a"}) || c.len() != 1 {
			t.Fatalf("70s on: dropped %v, %d held; want a too (unused for 70s), d kept (used 30s ago)", got, c.len())
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if got := droppedNow(); !slices.Equal(got, []string{"b", "a", "d"}) || c.len() != 0 {
			t.Fatalf("101s on: dropped %v, %d held; want d too", got, c.len())
		}
		c.add("e") // the sweep is set again for a cache that was empty
		time.Sleep(61 * time.Second)
		synctest.Wait()
		if c.len() != 0 {
			t.Fatalf("a session added to an empty cache is held after its idle time")
		}
	})
}

// 3000 initialize calls leave at most the cache's sessions held, and the
// heap about where it was: before, each kept ~11 KB for good (33 MB here).
// Sessions unused for the idle time are let go of too.
func TestMCPSessionsAreFreed(t *testing.T) {
	hs, s := testServer(t, smallvault.Open(t), Options{MaxSessions: 10, SessionIdle: time.Second})
	initialize(t, hs.URL) // the server's first use allocates what it keeps
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const calls = 3000
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`
	for range calls {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
	}
	grown := int64(heap()) - int64(before)
	if n := s.sessions.cache.len(); n > 10 {
		t.Errorf("%d sessions held after %d initialize calls, want at most 10", n, calls)
	}
	if grown > 8<<20 {
		t.Errorf("the heap grew by %.1f MB over %d initialize calls", float64(grown)/(1<<20), calls)
	}
	t.Logf("heap %+.1f MB over %d initialize calls", float64(grown)/(1<<20), calls)
	deadline := time.Now().Add(10 * time.Second)
	for s.sessions.cache.len() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.sessions.cache.len(); n != 0 {
		t.Errorf("%d sessions held 10s after the last use, want none (idle 1s)", n)
	}
}
