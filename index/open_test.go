package index

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// mappedPages is how many kB of the file at path this process has resident
// through its mappings (the Rss of each in /proc/self/smaps).
func mappedPages(tb testing.TB, path string) int {
	tb.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-"): // a mapping's first line
			in = len(fields) == 6 && fields[5] == path
		case in && len(fields) == 3 && fields[0] == "Rss:":
			var n int
			if _, err := fmt.Sscan(fields[1], &n); err != nil {
				tb.Fatal(err)
			}
			kb += n
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return kb
}

// TestIdleConnectionsUnmapTheFile checks that the pages of the index file a
// search mapped leave the process's resident set once the connections have
// been idle for ConnIdle, and that the next search opens them again.
func TestIdleConnectionsUnmapTheFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/smaps")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	var notes []vault.NoteInput
	for i := range 200 {
		notes = append(notes, note(fmt.Sprintf("n%03d.md", i), fmt.Sprintf("# Note %d\n\nlantern harbour %s", i, strings.Repeat("word ", 300))))
	}
	// Closed, the store folds its WAL into the file, which is what a
	// connection maps.
	w := mustOpen(t, Options{Path: path})
	mustApply(t, w, upserts(notes...))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, Options{Path: path, ConnIdle: 50 * time.Millisecond})
	search := func() {
		t.Helper()
		hits, err := s.Search().SearchFTS(ctx, "lantern harbour", 10, vault.ScopeAll, vault.FieldWeights{})
		if err != nil || len(hits) == 0 {
			t.Fatalf("SearchFTS: %d hits, %v", len(hits), err)
		}
	}
	search()
	if kb := mappedPages(t, s.Path()); kb == 0 {
		t.Fatal("a search mapped none of the file: nothing to release")
	}
	for deadline := time.Now().Add(30 * time.Second); mappedPages(t, s.Path()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d kB of the file still mapped after the connections idled for 30s", mappedPages(t, s.Path()))
		}
	}
	search()
}

// TestRecentRevsReadsTheNotesWrittenLastOnly checks that the feed's frequent
// check reads the notes written last through an index, not every row of
// docs sorted.
func TestRecentRevsReadsTheNotesWrittenLastOnly(t *testing.T) {
	s := mustOpen(t, Options{})
	var plan []string
	rows, err := s.reader.Query(`EXPLAIN QUERY PLAN `+recentRevsSQL, 20)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX docs_recent") || strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("plan of RecentRevs: %s, want docs_recent read in order", got)
	}
}
