package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/fakellm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// couchRelay is a loopback port that forwards every connection to the test
// CouchDB while up and refuses connections while down: CouchDB on a NAS
// that has not started it yet. Its port stays the same across both.
type couchRelay struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newCouchRelay(t *testing.T, srv *couchtest.Server) *couchRelay {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &couchRelay{addr: ln.Addr().String(), target: u.Host, conns: map[net.Conn]bool{}}
	ln.Close()
	t.Cleanup(r.down)
	return r
}

// URL is the relay's CouchDB URL.
func (r *couchRelay) URL() string { return "http://" + r.addr }

// up listens again on the relay's port and forwards what it accepts.
func (r *couchRelay) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatalf("relay up on %s: %v", r.addr, err)
	}
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.forward(c)
		}
	}()
}

func (r *couchRelay) forward(c net.Conn) {
	up, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	r.conns[c], r.conns[up] = true, true
	r.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, up)
	r.mu.Unlock()
}

// down closes the port and every connection through it.
func (r *couchRelay) down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
	}
}

// readyz is serve's /readyz: its status and body.
type readyzBody struct {
	Ready     bool     `json:"ready"`
	Feed      string   `json:"feed"`
	FeedError string   `json:"feed_error"`
	Notes     int      `json:"notes"`
	Missing   []string `json:"missing"`
}

func readyz(t *testing.T, s *served) (int, readyzBody) {
	t.Helper()
	var b readyzBody
	code := getJSON(t, s.url+"/readyz", &b)
	return code, b
}

// askServed asks serve's /v1 a question and returns the answer's text.
func askServed(t *testing.T, s *served, question string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "vault-ask", "messages": []map[string]string{{"role": "user", "content": question}}})
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return resp.StatusCode, string(raw)
	}
	return resp.StatusCode, out.Choices[0].Message.Content
}

// citingUpstream is a fake generation model that answers with the first
// passage's citation.
func citingUpstream(t *testing.T) *fakellm.Server {
	t.Helper()
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
	return up
}

// withEnv is env with key set to value, replacing any earlier value.
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// couchUser creates a CouchDB user allowed to read db, as an operator
// restoring a NAS's accounts would.
func couchUser(t *testing.T, srv *couchtest.Server, db, name, password string) {
	t.Helper()
	admin := func(method, path string, body any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(b))
		req.SetBasicAuth(srv.User, srv.Password)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %s %s", method, path, resp.Status, msg)
		}
	}
	admin(http.MethodPut, "/_users/org.couchdb.user:"+name, map[string]any{"name": name, "password": password, "roles": []string{}, "type": "user"})
	admin(http.MethodPut, "/"+db+"/_security", map[string]any{"members": map[string]any{"names": []string{name}}})
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/_users/org.couchdb.user:"+name, nil)
		req.SetBasicAuth(srv.User, srv.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		var doc struct {
			Rev string `json:"_rev"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		del, _ := http.NewRequest(http.MethodDelete, srv.URL+"/_users/org.couchdb.user:"+name+"?rev="+doc.Rev, nil)
		del.SetBasicAuth(srv.User, srv.Password)
		if resp, err := http.DefaultClient.Do(del); err == nil {
			resp.Body.Close()
		}
	})
}

// outage is CouchDB failing in one way when serve starts: env is serve's
// environment meanwhile and kind the error kind /readyz must give; write
// writes a note to the vault while CouchDB is away from serve, and fix ends
// the failure as an operator or a late NAS would.
type outage struct {
	env   []string
	kind  string
	write func(path, text string)
	fix   func()
}

// outages are the ways CouchDB can be missing at start, each set up on
// serveVault's vault (indexed first when indexed is set, so that the index
// has a checkpoint).
var outages = map[string]func(t *testing.T, indexed bool) outage{
	// Nothing listens on CouchDB's port until fix.
	"unreachable": func(t *testing.T, indexed bool) outage {
		srv, db, lp := serveVault(t)
		relay := newCouchRelay(t, srv)
		env := withEnv(serveEnv(t, srv, db, citingUpstream(t)), "VAULTASK_VAULT__URL", relay.URL())
		if indexed {
			relay.up(t)
			mustIndexVault(t, env)
			relay.down()
		}
		return outage{env: env, kind: "unreachable", write: putNote(t, lp), fix: func() { relay.up(t) }}
	},
	// The configured user does not exist until fix creates it.
	"unauthorized": func(t *testing.T, indexed bool) outage {
		srv, db, lp := serveVault(t)
		env := serveEnv(t, srv, db, citingUpstream(t))
		if indexed {
			mustIndexVault(t, env)
		}
		user := fmt.Sprintf("reader-%d", time.Now().UnixNano())
		env = withEnv(withEnv(env, "VAULTASK_VAULT__USER", user), "VAULTASK_VAULT__PASSWORD", "reader's password")
		return outage{env: env, kind: "unauthorized", write: putNote(t, lp), fix: func() { couchUser(t, srv, db, user, "reader's password") }}
	},
	// The database is gone until fix creates it again with the vault's
	// notes and those written meanwhile, as LiveSync's "rebuild remote"
	// does; the relay is down while it does, so the follower never sees it
	// half-written.
	"no database": func(t *testing.T, indexed bool) outage {
		srv, db, lp := serveVault(t)
		relay := newCouchRelay(t, srv)
		relay.up(t)
		env := withEnv(serveEnv(t, srv, db, citingUpstream(t)), "VAULTASK_VAULT__URL", relay.URL())
		if indexed {
			mustIndexVault(t, env)
		}
		if err := srv.DeleteDB(db); err != nil {
			t.Fatal(err)
		}
		notes := []livesyncput.Note{
			{Path: "Recipes/Sourdough bread.md", Text: "# Sourdough bread\n\nKnead the dough for ten minutes, then let it rise overnight in the fridge.\n"},
			{Path: "Recipes/Risotto.md", Text: "# Risotto\n\nStir the rice with warm stock, a ladle at a time, for eighteen minutes.\n"},
			{Path: "Journal/2026-11-30.md", Text: "# Monday\n\nBought a zebrafinch cage for the spare room.\n"},
		}
		return outage{env: env, kind: "no database",
			write: func(path, text string) { notes = append(notes, livesyncput.Note{Path: path, Text: text}) },
			fix: func() {
				relay.down()
				ctx := context.Background()
				if err := lp.CreateVault(ctx); err != nil {
					t.Fatal(err)
				}
				if err := lp.PutNew(ctx, notes); err != nil {
					t.Fatal(err)
				}
				relay.up(t)
			}}
	},
}

// putNote writes notes through LiveSync, straight to the test CouchDB.
func putNote(t *testing.T, lp *livesyncput.Client) func(path, text string) {
	return func(path, text string) {
		if err := lp.Put(context.Background(), path, text, false); err != nil {
			t.Fatal(err)
		}
	}
}

// mustIndexVault runs `vaultask index` with env: the index then has a
// checkpoint of the vault's database.
func mustIndexVault(t *testing.T, env []string) {
	t.Helper()
	if out, stderr, err := run(t, env, "index"); err != nil {
		t.Fatalf("index: %v\n%s\n%s", err, out, stderr)
	}
}

// firstAnswer asks s's /v1 a question, failing unless the answer holds
// want, and returns how long after start it was answered.
func firstAnswer(t *testing.T, s *served, start time.Time, want string) time.Duration {
	t.Helper()
	code, text := askServed(t, s, "how long do I knead the sourdough?")
	took := time.Since(start)
	if code != http.StatusOK || !strings.Contains(text, want) {
		t.Fatalf("/v1 while CouchDB is away: %d %s", code, text)
	}
	return took
}

// An index that has caught up before is served from the first second when
// CouchDB is unreachable, refuses the credentials or has no database at
// start: /readyz 200 with the feed's state and error kind, /v1 answers from
// the index, and the follower connects by itself once CouchDB is back,
// picking up what was written meanwhile.
func TestServeStartsWithoutCouchDB(t *testing.T) {
	for name, setup := range outages {
		t.Run(name, func(t *testing.T) {
			o := setup(t, true)
			start := time.Now()
			s := startServe(t, o.env)
			listening := time.Since(start)
			took := firstAnswer(t, s, start, "[[Recipes/Sourdough bread|Sourdough bread]]")
			t.Logf("CouchDB %s: listening %v after start, the first /v1 request answered %v after start",
				name, listening.Round(time.Millisecond), took.Round(time.Millisecond))
			want := o.kind + " (see /status)"
			waitUntil(t, 30*time.Second, "/readyz giving the feed's error", func() bool {
				code, b := readyz(t, s)
				if code != http.StatusOK || !b.Ready || b.Notes != 2 {
					t.Fatalf("/readyz with an index that has caught up before: %d %+v", code, b)
				}
				return b.FeedError == want && b.Feed == "reconnecting"
			})
			var st struct {
				Feed struct {
					LastError string `json:"last_error"`
					ErrorKind string `json:"error_kind"`
					Resumed   bool   `json:"resumed"`
				} `json:"feed"`
			}
			getJSON(t, s.url+"/status", &st)
			if st.Feed.ErrorKind != o.kind || st.Feed.LastError == "" || !st.Feed.Resumed {
				t.Fatalf("/status feed while CouchDB is away: %+v", st.Feed)
			}

			written := "Recipes/Focaccia.md"
			o.write(written, "# Focaccia\n\nDimple the dough with oiled fingers and bake it at 230 degrees.\n")
			o.fix()
			waitUntil(t, 90*time.Second, "the feed following again", func() bool {
				var notes struct{ Notes []struct{ Path string } }
				getJSON(t, s.url+"/status/notes?path="+url.QueryEscape(written), &notes)
				code, b := readyz(t, s)
				return code == http.StatusOK && b.Feed == "following" && b.FeedError == "" && len(notes.Notes) == 1
			})
			if strings.Contains(s.stderr.String(), "level=ERROR") {
				t.Errorf("serve logged an error:\n%s", s.stderr)
			}
		})
	}
}

// A fresh index with CouchDB away: serve stays up, /readyz is 503 saying
// why, /v1 answers (from nothing yet), and it is ready once CouchDB
// appears.
func TestServeStartsFreshWithoutCouchDB(t *testing.T) {
	for name, setup := range outages {
		t.Run(name, func(t *testing.T) {
			o := setup(t, false)
			s := startServe(t, o.env)
			if code, text := askServed(t, s, "how long do I knead the sourdough?"); code != http.StatusOK {
				t.Fatalf("/v1 on a fresh index while CouchDB is away: %d %s", code, text)
			}
			want := "feed connecting: " + o.kind + " (see /status)"
			waitUntil(t, 30*time.Second, "/readyz saying why it is not ready", func() bool {
				code, b := readyz(t, s)
				if code != http.StatusServiceUnavailable || b.Ready {
					t.Fatalf("/readyz on a fresh index while CouchDB is away: %d %+v", code, b)
				}
				return len(b.Missing) == 1 && b.Missing[0] == want
			})
			o.fix()
			waitUntil(t, 90*time.Second, "/readyz 200 once CouchDB is there", func() bool {
				code, b := readyz(t, s)
				return code == http.StatusOK && b.Notes == 2
			})
		})
	}
}

// An end-to-end encrypted vault without its passphrase at start: serve
// stays up and says so, on /readyz by kind; with an index that has caught
// up before, it is ready and answers from it.
func TestServeStartsWithoutPassphrase(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, livesyncFixtures, "vaultenc")
	env := couchEnv(t, srv, db)
	fresh := startServe(t, env)
	waitUntil(t, 30*time.Second, "/readyz saying the passphrase is missing", func() bool {
		code, b := readyz(t, fresh)
		if code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz on a fresh index without the passphrase: %d %+v", code, b)
		}
		return len(b.Missing) == 1 && b.Missing[0] == "feed connecting: passphrase (see /status)"
	})
	var st struct {
		Feed struct {
			LastError string `json:"last_error"`
		} `json:"feed"`
	}
	getJSON(t, fresh.url+"/status", &st)
	if !strings.Contains(st.Feed.LastError, "passphrase") {
		t.Fatalf("/status feed.last_error = %q", st.Feed.LastError)
	}
	if err := fresh.stop(); err != nil {
		t.Fatal(err)
	}

	mustIndexVault(t, append(env, "VAULTASK_VAULT__PASSPHRASE=correct horse battery staple"))
	resumed := startServe(t, env)
	waitUntil(t, 30*time.Second, "/readyz 200 giving the passphrase error", func() bool {
		code, b := readyz(t, resumed)
		if code != http.StatusOK || b.Notes != 1 {
			t.Fatalf("/readyz on an index that caught up before, without the passphrase: %d %+v", code, b)
		}
		return b.FeedError == "passphrase (see /status)"
	})
	if code, text := askServed(t, resumed, "what is on my shopping list?"); code != http.StatusOK || !strings.Contains(text, "[[Notes/Shopping List|") {
		t.Fatalf("/v1 from the index, without the passphrase: %d %s", code, text)
	}
}

// A malformed setting still stops serve at start, naming it.
func TestServeRefusesMalformedCouchDBURL(t *testing.T) {
	env := append(couchEnv(t, couchtest.Start(t), "vault"), "VAULTASK_API__LISTEN=127.0.0.1:0")
	env = withEnv(env, "VAULTASK_VAULT__URL", "ftp://nas.lan:5984")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := NewMain(&stdout, &stderr, env).Run(ctx, []string{"serve"})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "vault.url") {
		t.Fatalf("serve with a malformed vault.url: %v\n%s", err, stderr.String())
	}
}
