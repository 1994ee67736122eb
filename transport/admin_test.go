package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

const adminKey = "admin-test-key"

// adminEnv sets one editable key by the environment, which /admin must
// then refuse to change.
var adminEnv = []string{"VAULTASK_RETRIEVAL__MAX_CHUNKS_PER_DOC=3"}

// adminOptions are /admin's options over the real configuration package:
// the defaults as running values, and its startup validation as Check.
func adminOptions(t *testing.T) AdminOptions {
	t.Helper()
	running, err := config.Default().WithEnv(adminEnv)
	if err != nil {
		t.Fatal(err)
	}
	return AdminOptions{
		Key:       adminKey,
		Overrides: openOverrides(t, filepath.Join(t.TempDir(), "overrides.json")),
		Running:   running.Values(),
		FromEnv:   config.EnvKeys(adminEnv),
		Check: func(doc []byte) (map[string]any, error) {
			c, err := running.WithOverrides(doc, "proposed overrides")
			if err != nil {
				return nil, err
			}
			if c, err = c.WithEnv(adminEnv); err != nil {
				return nil, err
			}
			if err := c.Validate(); err != nil {
				return nil, err
			}
			return c.Values(), nil
		},
		GenerationModels: []string{"openrouter/google/gemini-2.5-flash"},
		WebProviders:     []WebProvider{{Name: "duckduckgo", Ready: true}, {Name: "tavily", KeyEnv: "VAULTASK_TAVILY_API_KEY"}},
	}
}

var _ Overrides = (*config.Overrides)(nil)

// openOverrides is the overrides file at path as a process starting now
// reads it.
func openOverrides(t *testing.T, path string) *config.Overrides {
	t.Helper()
	o, err := config.OpenOverrides(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// adminServer is a server whose /admin runs on opts.
func adminServer(t *testing.T, opts AdminOptions) *httptest.Server {
	t.Helper()
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Admin: opts, APIKey: "api-key"})
	return hs
}

// adminState as a client reads it.
type adminView struct {
	PendingRestart bool `json:"pending_restart"`
	Settings       []struct {
		Path, Type, Env string
		Running, Next   any
	} `json:"settings"`
	WebProviders []WebProvider `json:"web_providers"`
}

func (v adminView) setting(t *testing.T, path string) (running, next any, env string) {
	t.Helper()
	for _, s := range v.Settings {
		if s.Path == path {
			return s.Running, s.Next, s.Env
		}
	}
	t.Fatalf("no setting %s in %+v", path, v.Settings)
	return nil, nil, ""
}

// Without an admin key /admin's data is refused, never open; with one a
// missing or wrong X-API-Key is 401, and ten wrong ones lock the address
// out (the right key included) until the cool-down passes, while another
// address is unaffected.
func TestAdminAuth(t *testing.T) {
	t.Run("no key configured", func(t *testing.T) {
		opts := adminOptions(t)
		opts.Key = ""
		hs := adminServer(t, opts)
		for _, method := range []string{http.MethodGet, http.MethodPut} {
			var e apiErr
			resp := do(t, method, hs.URL+"/admin/config", `{"retrieval":{"final_top_k":6}}`, "X-API-Key", "")
			decode(t, resp, &e)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Error.Message, "VAULTASK_API__ADMIN_KEY") {
				t.Errorf("%s without an admin key: %d %+v, want 503 naming the variable", method, resp.StatusCode, e)
			}
		}
		if _, err := os.Stat(opts.Overrides.Path()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the overrides file was written without an admin key: %v", err)
		}
	})

	opts := adminOptions(t)
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	_, s := testServer(t, smallvault.Open(t), upstream(t), Options{Admin: opts})
	get := func(from, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/admin/config", nil)
		req.RemoteAddr = from
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	const attacker, admin = "192.0.2.7:4000", "[2001:db8::1]:5000"
	if rec := get(attacker, ""); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "X-API-Key") {
		t.Fatalf("no key: %d %s", rec.Code, rec.Body)
	}
	if rec := get(attacker, adminKey); rec.Code != http.StatusOK {
		t.Fatalf("the right key: %d %s", rec.Code, rec.Body)
	}
	for i := range maxAdminFailures {
		rec := get(attacker, "guess")
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "wrong admin key") {
			t.Fatalf("wrong key %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := get(attacker, adminKey)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "try again in 10 minutes") {
		t.Fatalf("the right key after 10 wrong ones: %d %q %s, want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec := get("192.0.2.7:4001", adminKey); rec.Code != http.StatusTooManyRequests {
		t.Errorf("the same address from another port: %d, want 429", rec.Code)
	}
	if rec := get(admin, adminKey); rec.Code != http.StatusOK {
		t.Errorf("another address: %d, want 200", rec.Code)
	}
	get("[2001:db8::2]:5000", "guess")
	if rec := get("[2001:db8::3]:5000", "guess"); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "8 more tries") {
		t.Errorf("the second wrong key from one /64: %d %s, want 8 tries left", rec.Code, rec.Body)
	}
	advance(adminCooldown - time.Second)
	if rec := get(attacker, adminKey); rec.Code != http.StatusTooManyRequests {
		t.Errorf("before the cool-down ends: %d, want 429", rec.Code)
	}
	advance(2 * time.Second)
	if rec := get(attacker, adminKey); rec.Code != http.StatusOK {
		t.Errorf("after the cool-down: %d, want 200", rec.Code)
	}
	// The right key forgets the wrong ones before it.
	for range maxAdminFailures - 1 {
		get(attacker, "guess")
	}
	get(attacker, adminKey)
	if rec := get(attacker, "guess"); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "9 more tries") {
		t.Errorf("a wrong key after the right one: %d %s", rec.Code, rec.Body)
	}
}

// The admin key is compared by hash in constant time: any other key, a
// prefix, a longer one or an empty one is not it.
func TestAdminKeyEqual(t *testing.T) {
	g := newAdminGate(adminKey, nil)
	for key, want := range map[string]bool{
		adminKey: true, adminKey + "x": false, adminKey[:len(adminKey)-1]: false, "": false,
		strings.ToUpper(adminKey): false, strings.Repeat("a", len(adminKey)): false,
	} {
		if got := g.keyEqual(key); got != want {
			t.Errorf("keyEqual(%q) = %v, want %v", key, got, want)
		}
	}
	for i := range 2000 {
		if wrong := fmt.Sprintf("%s-%d", adminKey, i); g.keyEqual(wrong) {
			t.Fatalf("keyEqual(%q) = true", wrong)
		}
	}
	if newAdminGate("", nil).set {
		t.Error("an empty admin key counts as set")
	}
}

// Status and the note list take the admin key as well as the API key, so
// /admin needs one key; a wrong admin key there counts as one, and a good
// bearer token is enough whatever X-API-Key says.
func TestStatusTakesTheAdminKey(t *testing.T) {
	hs := adminServer(t, adminOptions(t))
	for _, c := range []struct {
		header []string
		want   int
	}{
		{[]string{"Authorization", "Bearer api-key"}, http.StatusOK},
		{[]string{"X-API-Key", adminKey}, http.StatusOK},
		{[]string{"X-API-Key", "api-key"}, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer api-key", "X-API-Key", "stray"}, http.StatusOK},
		{nil, http.StatusUnauthorized},
	} {
		for _, path := range []string{"/status", "/status/notes?state=skipped"} {
			if resp := do(t, http.MethodGet, hs.URL+path, nil, c.header...); resp.StatusCode != c.want {
				t.Errorf("%s with %v: %d, want %d", path, c.header, resp.StatusCode, c.want)
			}
		}
	}
	noAdmin, _ := testServer(t, smallvault.Open(t), upstream(t), Options{APIKey: "api-key"})
	if resp := do(t, http.MethodGet, noAdmin.URL+"/status", nil, "Authorization", "Bearer api-key", "X-API-Key", "x"); resp.StatusCode != http.StatusOK {
		t.Errorf("/status with a good bearer and an X-API-Key, no admin key set: %d, want 200", resp.StatusCode)
	}
}

// A change that cannot be saved is refused with 400 naming each key at
// fault, and the overrides file is left alone: a value the startup
// validation refuses, one of the wrong type, a rule between keys, a key
// that is not editable (topology, the embedding model, secrets, anything
// else), unknown, or set by the environment, a web provider without its key.
func TestAdminRefusesBadChanges(t *testing.T) {
	opts := adminOptions(t)
	hs := adminServer(t, opts)
	for _, c := range []struct {
		body       string
		wantFields []string
		wantMsg    string
	}{
		{`{"retrieval":{"final_top_k":0}}`, []string{"retrieval.final_top_k"}, "retrieval.final_top_k (0) must be >= 1"},
		{`{"retrieval":{"final_top_k":"6"}}`, []string{"retrieval.final_top_k"}, `retrieval.final_top_k="6": want an integer`},
		{`{"retrieval":{"final_top_k":6.5}}`, []string{"retrieval.final_top_k"}, "want an integer"},
		{`{"retrieval":{"graph_enabled":1}}`, []string{"retrieval.graph_enabled"}, "want a boolean"},
		{`{"retrieval":{"rerank_top_k":3}}`, []string{"retrieval.rerank_top_k", "retrieval.final_top_k"}, "retrieval.rerank_top_k (3) must be >= retrieval.final_top_k (8)"},
		{`{"retrieval":{"fusion":"best"}}`, []string{"retrieval.fusion"}, "must be one of note, chunk"},
		{`{"models":{"generation":"gpt"}}`, []string{"models.generation"}, "is not a model id"},
		{`{"retrieval":{"final_top_k":[6]}}`, []string{"retrieval.final_top_k"}, "want a string, a number or a boolean"},
		{`{"retrieval":{"final_top_k":null}}`, []string{"retrieval.final_top_k"}, "want a string, a number or a boolean"},
		{`{"retrieval":{"final_top_k":6,"final_top_k":7}}`, []string{"retrieval.final_top_k"}, "given twice"},
		{`{"retrieval":{"fts_wieght":2}}`, []string{"retrieval.fts_wieght"}, `unknown key "retrieval.fts_wieght"`},
		{`{"retrieval":6}`, []string{"retrieval"}, "want an object"},
		{`{"retrieval":{"max_chunks_per_doc":1}}`, []string{"retrieval.max_chunks_per_doc"}, "set by the environment (VAULTASK_RETRIEVAL__MAX_CHUNKS_PER_DOC)"},
		{`{"web":{"provider":"tavily"}}`, []string{"web.provider"}, "set VAULTASK_TAVILY_API_KEY"},
		{`{"vault":{"url":"http://evil:5984"}}`, []string{"vault.url"}, "vault.url is not editable here"},
		{`{"vault":{"password":"x"}}`, []string{"vault.password"}, "every secret"},
		{`{"api":{"admin_key":"x"}}`, []string{"api.admin_key"}, "every secret"},
		{`{"api":{"listen":":9"}}`, []string{"api.listen"}, "api.listen is not editable here"},
		{`{"index":{"path":"/tmp/x.db"}}`, []string{"index.path"}, "index.path is not editable here"},
		{`{"models":{"embedding":"ollama/bge-m3"}}`, []string{"models.embedding"}, "vaultask index --rebuild"},
		{`{"models":{"embedding_dim":1024}}`, []string{"models.embedding_dim"}, "embedding model"},
		{`{"corpus":{"include":"x/**"}}`, []string{"corpus.include"}, "VAULTASK_CORPUS__INCLUDE"},
		{`{"web":{"max_results":5}}`, []string{"web.max_results"}, "not editable here"},
		{`{"nope":{"x":1}}`, []string{"nope.x"}, "not editable here"},
		{`[]`, nil, "want an object"},
		{`{"retrieval":{"final_top_k":6}} {}`, nil, "more than one JSON value"},
		{`{"retrieval":{"final_top_k":6}`, nil, "not valid JSON"},
	} {
		resp := do(t, http.MethodPut, hs.URL+"/admin/config", c.body, "X-API-Key", adminKey)
		var got struct {
			Error  apiErr `json:"-"`
			Errors []fieldError
		}
		var e apiErr
		raw := readAll(t, resp)
		_ = json.Unmarshal(raw, &got)
		_ = json.Unmarshal(raw, &e)
		if resp.StatusCode != http.StatusBadRequest || len(got.Errors) == 0 {
			t.Errorf("%s: %d %s, want 400 with errors", c.body, resp.StatusCode, raw)
			continue
		}
		fe := got.Errors[0]
		if !slices.Equal(fe.Fields, c.wantFields) && !(c.wantFields == nil && len(fe.Fields) == 0) || !strings.Contains(fe.Message, c.wantMsg) {
			t.Errorf("%s: first error %+v, want fields %v and a message with %q", c.body, fe, c.wantFields, c.wantMsg)
		}
		if e.Error.Message != fe.Message || (len(c.wantFields) > 0 && (e.Error.Param == nil || !strings.HasPrefix(*e.Error.Param, c.wantFields[0]))) {
			t.Errorf("%s: OpenAI-shaped error %+v does not match %+v", c.body, e.Error, fe)
		}
		if strings.Contains(fe.Message, "proposed overrides:") {
			t.Errorf("%s: message %q carries the document's line", c.body, fe.Message)
		}
	}
	if _, err := os.Stat(opts.Overrides.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused change wrote the overrides file: %v", err)
	}
}

// A good change merges into the overrides file, which is replaced
// atomically (a reader never sees half of it) and readable by its owner
// alone; GET then reports the running and next values and pending_restart,
// which compares the file's meaning with what the process booted with.
func TestAdminSavesOverrides(t *testing.T) {
	opts := adminOptions(t)
	file := opts.Overrides.Path()
	// The file holds a key /admin does not edit, from before: it stays.
	// It was booted with other text that says the same.
	if err := os.WriteFile(file, []byte("{ \"log\": {\"level\": \"debug\"} }"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Overrides = openOverrides(t, file)
	if err := os.WriteFile(file, []byte(`{"log":{"level":"debug"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := adminServer(t, opts)
	get := func() adminView {
		var v adminView
		decode(t, do(t, http.MethodGet, hs.URL+"/admin/config", nil, "X-API-Key", adminKey), &v)
		return v
	}
	v := get()
	if v.PendingRestart {
		t.Error("pending_restart before any save, with the file as booted")
	}
	if _, _, env := v.setting(t, "retrieval.max_chunks_per_doc"); env != "VAULTASK_RETRIEVAL__MAX_CHUNKS_PER_DOC" {
		t.Errorf("the key the environment sets shows env %q", env)
	}
	for _, s := range v.Settings {
		if ok, _ := config.Editable(s.Path); !ok {
			t.Errorf("GET shows %s, which is not editable", s.Path)
		}
	}
	if len(v.WebProviders) != 2 || v.WebProviders[1].Ready {
		t.Errorf("web providers = %+v", v.WebProviders)
	}

	// Readers of the file meanwhile never see a partial one.
	stop := make(chan struct{})
	var torn atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(file); err == nil && !json.Valid(b) {
				torn.Add(1)
			}
		}
	})
	for i := range 20 {
		resp := do(t, http.MethodPut, hs.URL+"/admin/config", map[string]any{"retrieval": map[string]any{"final_top_k": 6, "fts_weight": 1.5 + float64(i%2)}}, "X-API-Key", adminKey)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("save: %d %s", resp.StatusCode, readAll(t, resp))
		}
	}
	close(stop)
	wg.Wait()
	if torn.Load() > 0 {
		t.Errorf("a reader saw a partial overrides file %d times", torn.Load())
	}
	resp := do(t, http.MethodPut, hs.URL+"/admin/config", `{"models":{"rerank":"ollama/bge-reranker"},"web":{"enabled":true}}`, "X-API-Key", adminKey)
	var saved adminView
	decode(t, resp, &saved)
	if resp.StatusCode != http.StatusOK || !saved.PendingRestart {
		t.Fatalf("save: %d %+v, want 200 and pending_restart", resp.StatusCode, saved)
	}
	if running, next, _ := saved.setting(t, "retrieval.final_top_k"); running != 8.0 || next != 6.0 {
		t.Errorf("final_top_k running %v next %v, want 8 and 6", running, next)
	}
	if _, next, _ := saved.setting(t, "models.rerank"); next != "ollama/bge-reranker" {
		t.Errorf("models.rerank next %v", next)
	}

	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("overrides file mode %v, want 0600", info.Mode().Perm())
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(mustRead(t, file), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["retrieval"]["final_top_k"] != 6.0 || doc["retrieval"]["fts_weight"] != 2.5 || doc["models"]["rerank"] != "ollama/bge-reranker" || doc["web"]["enabled"] != true || doc["log"]["level"] != "debug" {
		t.Errorf("overrides file = %v", doc)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the overrides file alone (no temporary left)", len(entries))
	}
	// The file as it is now, booted with, is not pending.
	opts.Overrides = openOverrides(t, file)
	hs = adminServer(t, opts)
	v = get()
	if v.PendingRestart {
		t.Error("pending_restart with the file as booted")
	}
	// A save that says the same again is still not pending.
	if resp := do(t, http.MethodPut, hs.URL+"/admin/config", `{"retrieval":{"final_top_k":6}}`, "X-API-Key", adminKey); resp.StatusCode != http.StatusOK {
		t.Fatalf("save: %d", resp.StatusCode)
	}
	if get().PendingRestart {
		t.Error("pending_restart after saving the values already booted")
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
