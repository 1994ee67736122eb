package feed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/couchtest"
)

// BenchmarkIndexCorpus indexes a corpus from the test CouchDB into a fresh
// index, full text only (no embedder runs in feed): the _all_docs scan,
// decoding, reassembly and the index writes. The database is loaded once,
// outside the timing.
//
//	go test -tags sqlite_fts5 -run '^$' -bench IndexCorpus -benchtime 3x ./feed/
func BenchmarkIndexCorpus(b *testing.B) {
	dir := corpustext.Require(b)
	for _, name := range []string{"help", "hub"} {
		b.Run(name, func(b *testing.B) {
			srv := couchtest.Start(b)
			db := srv.NewDB(b)
			if name == "hub" {
				loadHub(b, srv, db, dir)
			} else {
				srv.LoadFixture(b, db, dir, name)
			}
			c := mustConnect(b, couchOptions(srv, db))
			ctx := context.Background()
			listStart := time.Now()
			l, err := NewReconciler(c, nil).List(ctx)
			if err != nil {
				b.Fatal(err)
			}
			listed := time.Since(listStart)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				store := mustOpenStore(b, filepath.Join(b.TempDir(), "index.db"))
				b.StartTimer()
				res, err := NewReconciler(c, store.Feed()).Run(ctx, ReconcileOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if res.Notes != len(l.Notes) || res.Sync.Added != res.Notes {
					b.Fatalf("indexed %d of %d notes", res.Sync.Added, len(l.Notes))
				}
			}
			perRun := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(len(l.Notes)), "notes")
			b.ReportMetric(float64(len(l.Notes))/perRun, "notes/s")
			b.ReportMetric(listed.Seconds(), "list-only-s")
		})
	}
}

// BenchmarkPutToVisible is the latency from LiveSync writing a new note (its
// chunk, then its metadata, each a PUT) to the note being readable in the
// index's docs table, with a follower running at its default settings on
// the help corpus. Each iteration is one new note; run it 20 times for the
// median:
//
//	go test -tags sqlite_fts5 -run '^$' -bench PutToVisible -benchtime 20x ./feed/
func BenchmarkPutToVisible(b *testing.B) {
	dir := corpustext.Require(b)
	srv := couchtest.Start(b)
	db := srv.NewDB(b)
	srv.LoadFixture(b, db, dir, "help")
	c := mustConnect(b, couchOptions(srv, db))
	store := mustStore(b)
	f := mustFollow(b, c, store, FollowerOptions{})
	waitCaughtUp(b, srv, db, f)
	reader := mustSQL(b, store)
	var lat []time.Duration
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		path := fmt.Sprintf("Bench/Edit %d.md", i)
		note, chunk := liveNote(path, fmt.Sprintf("# Edit %d\n\nWritten at %s.\n", i, time.Now().Format(time.RFC3339Nano)))
		start := time.Now()
		put(b, srv, db, chunk)
		put(b, srv, db, note)
		waitVisible(b, reader, path)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[0].Microseconds())/1000, "ms-min")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-max")
}

func waitVisible(tb testing.TB, db *sql.DB, path string) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var rev string
		err := db.QueryRow(`SELECT rev FROM docs WHERE path = ?`, path).Scan(&rev)
		if err == nil {
			return
		}
		if !errors.Is(err, sql.ErrNoRows) {
			tb.Fatal(err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s not visible after 60s", path)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkNormalNoteBehindHostile is how long a normal note written right
// after a hostile one (a single line of 100,000 '>', which goldmark parses
// in quadratic time) takes to become visible, with a follower running:
//
//	go test -tags sqlite_fts5 -run '^$' -bench NormalNoteBehindHostile -benchtime 5x ./feed/
func BenchmarkNormalNoteBehindHostile(b *testing.B) {
	srv := couchtest.Start(b)
	db := srv.NewDB(b)
	c := mustConnect(b, couchOptions(srv, db))
	store := mustStore(b)
	f := mustFollow(b, c, store, FollowerOptions{})
	waitCaughtUp(b, srv, db, f)
	reader := mustSQL(b, store)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		hostile, hchunk := liveNote(fmt.Sprintf("Bench/Hostile %d.md", i), strings.Repeat(">", 100_000)+fmt.Sprintf(" %d\n", i))
		path := fmt.Sprintf("Bench/Normal %d.md", i)
		normal, nchunk := liveNote(path, fmt.Sprintf("# Normal %d\n\nAn ordinary note.\n", i))
		start := time.Now()
		bulk(b, srv, db, hchunk, hostile)
		bulk(b, srv, db, nchunk, normal)
		waitVisible(b, reader, path)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-max")
}

// BenchmarkRecreationNoticed measures how long a follower with the default
// check interval takes, after a database is recreated under its open feed,
// to make the index equal the new database: recreated at exactly the
// checkpoint's sequence, and with a lower one. The mass-removal confirmation
// is shortened to 20 ms, so the figure is the time to notice (it adds its
// 15 s by default); a recreation not noticed within two minutes reports
// 120 s, as the hourly reconcile would be what catches it.
//
//	go test -tags sqlite_fts5 -run '^$' -bench RecreationNoticed -benchtime 1x ./feed/
func BenchmarkRecreationNoticed(b *testing.B) {
	for _, tc := range []struct {
		name  string
		paths []string
	}{{"same-seq", []string{"New/A.md", "New/B.md", "New/C.md"}}, {"lower-seq", []string{"New/A.md"}}} {
		b.Run(tc.name, func(b *testing.B) {
			var took time.Duration
			for b.Loop() {
				srv := couchtest.Start(b)
				db := srv.NewDB(b)
				seq := threeOldNotes(b, srv, db)
				store := mustOpenStore(b, filepath.Join(b.TempDir(), "index.db"))
				opts := couchOptions(srv, db)
				opts.Heartbeat = 200 * time.Millisecond
				f := NewFollower(mustConnect(b, opts), store.Feed(), FollowerOptions{ConfirmDelay: 20 * time.Millisecond})
				if err := f.Open(context.Background()); err != nil {
					b.Fatal(err)
				}
				waitConnected(b, srv, db, f)
				var want map[string]string
				if len(tc.paths) == 3 {
					want = recreateAtSeq(b, srv, db, seq, tc.paths...)
				} else {
					recreate(b, srv, db)
					n, c := liveNote(tc.paths[0], "rebuilt "+tc.paths[0]+"\n")
					bulk(b, srv, db, c, n)
					want = map[string]string{tc.paths[0]: hashOf("rebuilt " + tc.paths[0] + "\n")}
				}
				start := time.Now()
				for !mapsEqual(want, mustSnapshot(b, store).Docs) && time.Since(start) < 2*time.Minute {
					time.Sleep(50 * time.Millisecond)
				}
				took = time.Since(start)
				closeFollower(b, f)
			}
			b.ReportMetric(took.Seconds(), "s-to-match")
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
