package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/syncbuf"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/fakellm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// served is a running `vaultask serve`.
type served struct {
	url    string
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	stop   func() error // SIGINT, then wait for the exit
}

var servingOn = regexp.MustCompile(`serving on (http://\S+)`)

// startServe runs `vaultask serve` in this process with env, on a free
// loopback port, and waits until it listens. Each of with adjusts the Main
// before it runs.
func startServe(t testing.TB, env []string, with ...func(*Main)) *served {
	t.Helper()
	env = append(env, "VAULTASK_API__LISTEN=127.0.0.1:0")
	ctx, interrupt := context.WithCancel(context.Background())
	s := &served{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}}
	done := make(chan error, 1)
	m := NewMain(s.stdout, s.stderr, env)
	for _, f := range with {
		f(m)
	}
	go func() { done <- m.Run(ctx, []string{"serve"}) }()
	var once sync.Once
	var result error
	s.stop = func() error {
		once.Do(func() {
			interrupt()
			select {
			case result = <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("serve did not stop within 30s of SIGINT\n%s", s.stderr)
			}
		})
		return result
	}
	t.Cleanup(func() { _ = s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingOn.FindStringSubmatch(s.stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen within 30s\n%s", s.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// getJSON GETs url into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

// waitUntil polls cond every 20ms for up to d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveVault is a small LiveSync vault in the test CouchDB: a few notes, a
// personal one, one whose chunks are missing.
// waitEmbedded waits until serve's /status, asked with the API key, shows
// notes notes indexed and every chunk embedded, for a minute or as long as
// within says.
func waitEmbedded(t *testing.T, s *served, key string, notes int, within ...time.Duration) {
	t.Helper()
	d := 60 * time.Second
	if len(within) > 0 {
		d = within[0]
	}
	waitUntil(t, d, "every note indexed and embedded", func() bool {
		var st struct {
			Index struct {
				Notes, Vectors   int
				EmbeddingBacklog int `json:"embedding_backlog"`
			} `json:"index"`
		}
		req, _ := http.NewRequest(http.MethodGet, s.url+"/status", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(&st)
		return st.Index.Notes == notes && st.Index.Vectors > 0 && st.Index.EmbeddingBacklog == 0
	})
}

func serveVault(t testing.TB) (*couchtest.Server, string, *livesyncput.Client) {
	t.Helper()
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	lp := &livesyncput.Client{DB: srv.DBURL(db), User: srv.User, Password: srv.Password}
	ctx := context.Background()
	for path, text := range map[string]string{
		"Recipes/Sourdough bread.md": "# Sourdough bread\n\nKnead the dough for ten minutes, then let it rise overnight in the fridge.\n",
		"Recipes/Risotto.md":         "# Risotto\n\nStir the rice with warm stock, a ladle at a time, for eighteen minutes.\n",
		"Journal/2026-11-30.md":      "# Monday\n\nBought a zebrafinch cage for the spare room.\n",
	} {
		if err := lp.Put(ctx, path, text, false); err != nil {
			t.Fatal(err)
		}
	}
	// A note whose chunk never arrives.
	if err := lp.PutMetadata(ctx, "Half.md", "a note whose chunk is missing\n"); err != nil {
		t.Fatal(err)
	}
	return srv, db, lp
}

func serveEnv(t testing.TB, srv *couchtest.Server, db string, up *fakellm.Server) []string {
	t.Helper()
	var env []string
	for _, kv := range couchEnv(t, srv, db) {
		if !strings.HasPrefix(kv, "VAULTASK_MODELS__BUILTIN_DIR=") { // the real built-in embedder
			env = append(env, kv)
		}
	}
	env = append(env,
		`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**"]`,
		"VAULTASK_MODELS__GENERATION=ollama/fake",
		"VAULTASK_MODELS__GENERATION_BASE_URL="+up.URL(),
	)
	return env
}

// `vaultask serve` follows the vault live: ready once caught up, /status
// with the feed and index keys, an edit written through LiveSync shows on
// /events and /status and is answered, and a SIGINT stops it cleanly.
func TestServeFollowsTheVault(t *testing.T) {
	srv, db, lp := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.Reply = func(msgs []fakellm.Message) string {
		last := msgs[len(msgs)-1].Content
		if i := strings.Index(last, `cite="`); i >= 0 {
			cite := last[i+6:]
			return "From the vault: " + cite[:strings.Index(cite, `"`)]
		}
		return "The vault is silent on this."
	}
	s := startServe(t, serveEnv(t, srv, db, up))

	var ready map[string]any
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &ready) == http.StatusOK })
	var st struct {
		Version string `json:"version"`
		Feed    struct {
			Source    string `json:"source"`
			Connected bool   `json:"connected"`
			State     string `json:"state"`
			CaughtUp  bool   `json:"caught_up"`
			LastSeq   string `json:"last_seq"`
			UpdateSeq string `json:"update_seq"`
			Lag       int    `json:"lag"`
		} `json:"feed"`
		Index struct {
			Notes            int `json:"notes"`
			Chunks           int `json:"chunks"`
			Vectors          int `json:"vectors"`
			EmbeddingBacklog int `json:"embedding_backlog"`
			IncompleteNotes  int `json:"incomplete_notes"`
		} `json:"index"`
	}
	waitUntil(t, 30*time.Second, "the feed connected and every note embedded", func() bool {
		getJSON(t, s.url+"/status", &st)
		return st.Feed.Connected && st.Index.EmbeddingBacklog == 0 && st.Index.Vectors > 0
	})
	if st.Feed.Source != "couchdb" || st.Feed.State != "following" || !st.Feed.CaughtUp || st.Feed.LastSeq == "" || st.Feed.Lag != 0 || st.Index.Notes != 3 || st.Index.IncompleteNotes != 1 || st.Version == "" {
		t.Fatalf("/status = %+v", st)
	}
	var notes struct {
		Notes []struct{ Path, State, Reason string } `json:"notes"`
	}
	getJSON(t, s.url+"/status/notes?state=incomplete", &notes)
	if len(notes.Notes) != 1 || notes.Notes[0].Path != "Half.md" || !strings.Contains(notes.Notes[0].Reason, "missing chunks") {
		t.Fatalf("/status/notes?state=incomplete = %+v", notes)
	}

	// Watch /events, then edit a note on the "phone".
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/events", nil)
	events, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	seen := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(events.Body)
		for sc.Scan() {
			seen <- sc.Text()
		}
		close(seen)
	}()
	written := time.Now()
	if err := lp.Put(context.Background(), "Recipes/Focaccia.md", "# Focaccia\n\nDimple the dough with oiled fingers and bake it at 230 degrees.\n", true); err != nil {
		t.Fatal(err)
	}
	var gotEvent bool
	for !gotEvent {
		select {
		case line, ok := <-seen:
			if !ok {
				t.Fatal("/events ended")
			}
			gotEvent = strings.Contains(line, "Recipes/Focaccia.md")
		case <-time.After(10 * time.Second):
			t.Fatal("no event for the new note within 10s")
		}
	}
	t.Logf("LiveSync write to its event on /events: %v", time.Since(written).Round(time.Millisecond))
	getJSON(t, s.url+"/status", &st)
	if st.Index.Notes != 4 || st.Feed.LastSeq != st.Feed.UpdateSeq {
		t.Errorf("/status after the edit: %+v", st)
	}
	// The new note is answerable at once, cited by its path.
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"vault-ask","messages":[{"role":"user","content":"what temperature do I bake focaccia at?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "[[Recipes/Focaccia|Focaccia]]") {
		t.Fatalf("answer about the new note: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := s.stop(); err != nil {
		t.Fatalf("serve after SIGINT: %v\n%s", err, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "stopped following") {
		t.Errorf("the feed did not stop cleanly:\n%s", s.stderr)
	}
}

// A SIGINT while an answer streams lets it finish, within the drain time,
// and ends /events with a last event; serve then exits cleanly.
func TestServeDrainsOnShutdown(t *testing.T) {
	srv, db, _ := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken = 300*time.Millisecond, 200*time.Millisecond
	up.Reply = func([]fakellm.Message) string { return "one two three four five six" }
	s := startServe(t, serveEnv(t, srv, db, up))
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })

	events, err := http.Get(s.url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"vault-ask","stream":true,"messages":[{"role":"user","content":"how long do I knead the sourdough?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	if _, err := rd.ReadString('\n'); err != nil { // the role chunk: the answer is running
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	rest, _ := io.ReadAll(rd)
	if !strings.Contains(string(rest), "six") || !strings.HasSuffix(strings.TrimSpace(string(rest)), "data: [DONE]") {
		t.Fatalf("the running answer was cut at shutdown:\n%s", rest)
	}
	last, _ := io.ReadAll(events.Body)
	if !strings.Contains(string(last), "event: shutdown") {
		t.Errorf("/events did not end with a shutdown event:\n%s", last)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// A SIGINT while an answer streams longer than the drain time ends the
// stream with a last frame, an error saying the server is shutting down,
// then [DONE], before the connection closes; serve still exits cleanly.
func TestServeEndsLongStreamsOnShutdown(t *testing.T) {
	srv, db, _ := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken = 100*time.Millisecond, time.Second
	up.Reply = func([]fakellm.Message) string { return strings.Repeat("word ", 20) } // a 20 s stream
	s := startServe(t, serveEnv(t, srv, db, up), func(m *Main) { m.drain = time.Second })
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })

	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"vault-ask","stream":true,"messages":[{"role":"user","content":"how long do I knead the sourdough?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for { // the first word: the answer is streaming
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before its first word: %v", err)
		}
		if strings.Contains(line, `"content":"word`) {
			break
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("the stream was cut at shutdown (%v) after:\n%s", err, rest)
	}
	var frames []string
	for line := range strings.Lines(string(rest)) {
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			frames = append(frames, data)
		}
	}
	if len(frames) < 2 || frames[len(frames)-1] != "[DONE]" {
		t.Fatalf("the stream did not end with [DONE]:\n%s", rest)
	}
	var last struct {
		Error struct{ Message, Type string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(frames[len(frames)-2]), &last); err != nil || last.Error.Type != "server_error" || !strings.Contains(last.Error.Message, "shutting down") {
		t.Fatalf("the frame before [DONE] is not an error saying the server is shutting down:\n%s", rest)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve: %v\n%s", err, s.stderr)
	}
}

// Twenty streaming clients for a while, with the follower applying edits
// meanwhile: no error, no goroutine left behind; the time to the first
// token is reported.
func TestServeUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test runs for seconds")
	}
	srv, db, lp := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken = 20*time.Millisecond, 5*time.Millisecond
	up.Reply = func([]fakellm.Message) string { return strings.Repeat("word ", 30) }
	env := append(serveEnv(t, srv, db, up), "VAULTASK_API__MAX_CONCURRENT=32")
	before := ownGoroutines()
	s := startServe(t, env)
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })

	const clients = 20
	duration := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("VAULTASKTEST_LOAD")); err == nil {
		duration = d
	}
	end := time.Now().Add(duration)
	var mu sync.Mutex
	var ttft []time.Duration
	var failures []string
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				start := time.Now()
				resp, err := http.Post(s.url+"/v1/chat/completions", "application/json",
					strings.NewReader(`{"model":"vault-ask","stream":true,"messages":[{"role":"user","content":"how long do I knead the sourdough?"}]}`))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				var first time.Duration
				sc := bufio.NewScanner(resp.Body)
				ok := false
				for sc.Scan() {
					line := sc.Text()
					if first == 0 && strings.Contains(line, `"content":"word`) {
						first = time.Since(start)
					}
					if line == "data: [DONE]" {
						ok = true
					}
				}
				resp.Body.Close()
				mu.Lock()
				if !ok || resp.StatusCode != http.StatusOK {
					failures = append(failures, "client "+resp.Status)
				} else {
					ttft = append(ttft, first)
				}
				mu.Unlock()
			}
		})
	}
	// The follower applies an edit every 200ms meanwhile.
	edits := 0
	for time.Now().Before(end) {
		edits++
		if err := lp.Put(context.Background(), "Load/Edit.md", strings.Repeat("edit ", edits), edits%2 == 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures, the first: %s", len(failures), failures[0])
	}
	if len(ttft) < clients {
		t.Fatalf("only %d answers in %v", len(ttft), duration)
	}
	slices.Sort(ttft)
	t.Logf("%d streamed answers by %d clients in %v, %d edits applied meanwhile; time to first token p50 %v, p95 %v",
		len(ttft), clients, duration, edits, ttft[len(ttft)/2].Round(time.Millisecond), ttft[len(ttft)*95/100].Round(time.Millisecond))
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for ownGoroutines() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before serve, %d after it stopped:\n%s", before, ownGoroutines(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownGoroutines counts the goroutines other than the ones of pooled HTTP
// connections to the test's own servers (the fake model, the test
// CouchDB): those belong to the connection pools, which outlive a request
// by design, not to vaultask.
func ownGoroutines() int {
	buf := make([]byte, 4<<20)
	n := 0
	for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "net/http.(*persistConn)") && !strings.Contains(g, "net/http.(*conn).serve") {
			n++
		}
	}
	return n
}

// A stop (SIGINT, SIGTERM) with an idle MCP GET stream open ends the stream
// at once: the drain time is for answers, and before, the stream held serve
// until the drain's cut, 8 s of the default 10, whose warning said so.
func TestServeEndsIdleMCPStreamsAtOnce(t *testing.T) {
	s := startServe(t, []string{
		"VAULTASK_VAULT__SOURCE=folder", "VAULTASK_VAULT__PATH=" + filepath.Join("..", "..", "demo", "vault"),
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "vaultask.db"),
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(t.TempDir(), "no-model-here"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}, func(m *Main) { m.drain = 20 * time.Second })
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })
	opened, err := http.Post(s.url+"/mcp", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	opened.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, s.url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", opened.Header.Get("Mcp-Session-Id"))
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET /mcp: %v %v", err, stream)
	}
	defer stream.Body.Close()

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Fatalf("the stream was cut at shutdown, not ended: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve: %v\n%s", err, s.stderr)
	}
	if log := s.stderr.String(); strings.Contains(log, "drain time") {
		t.Fatalf("the idle stream was ended by the drain's cut, not at once:\n%s", log)
	}
}
