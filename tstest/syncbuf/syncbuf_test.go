package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

// Writers and a reader at once: every write lands whole (run with -race).
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); strings.Count(got, "ab\n") != 400 || len(got) != 1200 {
		t.Fatalf("%d bytes, %d whole writes; want 400 writes of 3 bytes", len(got), strings.Count(got, "ab\n"))
	}
}
