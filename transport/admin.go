package transport

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AdminOptions configure /admin's data, GET and PUT /admin/config. The
// configuration itself is cmd's business: transport sees its values by
// path and a Check that runs the startup validation.
type AdminOptions struct {
	// Key is required as X-API-Key (api.admin_key). Without one /admin's
	// data is refused with 503: it fails closed, never open.
	Key string
	// OverridesFile is the file /admin writes and the next start reads.
	OverridesFile string
	// Booted is the overrides file as this process read it at start; nil
	// when there was none.
	Booted []byte
	// Running are the values this process runs with, by path
	// ("retrieval.final_top_k"), secrets left out: strings, ints, float64s
	// and bools for the keys /admin edits.
	Running map[string]any
	// FromEnv are the keys set by VAULTASK_ variables, which win over the
	// overrides file, so /admin refuses to change them.
	FromEnv []string
	// Check validates a whole overrides document as the next start would
	// apply it (the running configuration, the document, the environment,
	// then the startup validation) and returns the values that result, or
	// every problem, each naming its key.
	Check func(doc []byte) (map[string]any, error)
	// GenerationModels is the shortlist offered for models.generation,
	// which takes any model id still.
	GenerationModels []string
	// WebProviders are the web search providers and whether each has the
	// key it needs.
	WebProviders []WebProvider
	// Now is the lockout's clock; default time.Now.
	Now func() time.Time
}

// WebProvider is a web search provider as /admin offers it.
type WebProvider struct {
	Name string `json:"name"`
	// KeyEnv is the environment variable holding its API key, if it needs one.
	KeyEnv string `json:"key_env,omitempty"`
	// Ready is set when it needs no key or its key is set.
	Ready bool `json:"ready"`
}

// Lockout: this many wrong admin keys from one client address lock it out
// for adminCooldown, the right key included.
const (
	maxAdminFailures = 10
	adminCooldown    = 10 * time.Minute
	// maxLockoutEntries bounds the addresses remembered; past it the ones
	// neither locked nor recently wrong are forgotten first.
	maxLockoutEntries = 4096
)

// adminGate checks the admin key, counting wrong ones per client address.
type adminGate struct {
	want [sha256.Size]byte
	set  bool
	now  func() time.Time

	mu      sync.Mutex
	clients map[netip.Prefix]*strikes
}

type strikes struct {
	n     int
	last  time.Time
	until time.Time // locked out until then
}

func newAdminGate(key string, now func() time.Time) *adminGate {
	if now == nil {
		now = time.Now
	}
	return &adminGate{want: sha256.Sum256([]byte(key)), set: key != "", now: now, clients: map[netip.Prefix]*strikes{}}
}

// keyEqual compares a key with the admin key in time independent of either
// one's content and length: both are hashed first, and the hashes compared
// in constant time.
func (g *adminGate) keyEqual(got string) bool {
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], g.want[:]) == 1
}

// clientOf is the address lockouts count by: the connection's IP (a
// forwarded header is anyone's to write), an IPv6 client by its /64, which
// one machine usually holds whole.
func clientOf(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// admit reports whether the request's key is the admin key, and otherwise
// answers it: 503 without an admin key, 429 while its address is locked
// out, 401 for a missing or wrong key.
func (g *adminGate) admit(w http.ResponseWriter, r *http.Request) bool {
	if !g.set {
		writeError(w, http.StatusServiceUnavailable, "invalid_request_error", "", "admin_disabled",
			"no admin key is configured: set VAULTASK_API__ADMIN_KEY and restart to use /admin")
		return false
	}
	client := clientOf(r)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.clients[client]
	if s != nil && now.Before(s.until) {
		wait := s.until.Sub(now)
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+1)))
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "", "locked_out",
			fmt.Sprintf("%d wrong admin keys from this address: try again in %s", maxAdminFailures, roundUp(wait)))
		return false
	}
	key := r.Header.Get("X-API-Key")
	if key != "" && g.keyEqual(key) {
		delete(g.clients, client)
		return true
	}
	if key == "" {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "missing_key", "send the admin key (VAULTASK_API__ADMIN_KEY) as X-API-Key")
		return false
	}
	if s == nil || now.Sub(s.last) > adminCooldown {
		g.forget(now)
		s = &strikes{}
		g.clients[client] = s
	}
	s.n++
	s.last = now
	left := maxAdminFailures - s.n
	if left <= 0 {
		s.n, s.until = 0, now.Add(adminCooldown)
	}
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "wrong_key",
		fmt.Sprintf("wrong admin key (%d more tries before a %s lockout)", max(left, 0), roundUp(adminCooldown)))
	return false
}

// forget makes room for a new address once the table is full: first the
// addresses whose strikes are old and that are not locked out, then any
// that are not locked out.
func (g *adminGate) forget(now time.Time) {
	if len(g.clients) < maxLockoutEntries {
		return
	}
	for c, s := range g.clients {
		if now.Sub(s.last) > adminCooldown && !now.Before(s.until) {
			delete(g.clients, c)
		}
	}
	for c, s := range g.clients {
		if len(g.clients) < maxLockoutEntries {
			return
		}
		if !now.Before(s.until) {
			delete(g.clients, c)
		}
	}
}

func roundUp(d time.Duration) string {
	if m := int((d + time.Minute - 1) / time.Minute); m > 1 {
		return strconv.Itoa(m) + " minutes"
	}
	return "a minute"
}

func (s *Server) adminAuthed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.admin.admit(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// statusAuthed admits the API key, or the admin key in X-API-Key: /admin
// shows the status too, and its key is the stronger one. A request with a
// bearer token, or any request while no admin key is set, goes by the API
// key alone, so a stray X-API-Key neither refuses a good bearer nor counts
// towards the admin lockout.
func (s *Server) statusAuthed(next http.Handler) http.Handler {
	api, admin := s.authed(next), s.adminAuthed(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "" && r.Header.Get("Authorization") == "" && s.opts.Admin.Key != "" {
			admin.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// editable says whether /admin may change the key at path: the generation
// and rerank models, whether and how to search the web, and the retrieval
// tuning. Where the vault, the index and the API are, the embedding model
// (it decides every stored vector) and every secret come from config.yaml
// and the environment only.
func editable(path string) (bool, string) {
	section, key, _ := strings.Cut(path, ".")
	switch {
	case path == "models.generation", path == "models.rerank", path == "web.enabled", path == "web.provider", section == "retrieval":
		return true, ""
	case section == "vault", section == "index", section == "api":
		return false, fmt.Sprintf("%s is not editable here: where the vault, the index and the API are, and every secret, come from config.yaml and the environment only", path)
	case section == "models" && (strings.HasPrefix(key, "embedding") || key == "builtin_dir"):
		return false, fmt.Sprintf("%s is not editable here: the embedding model decides every vector in the index, and changing it means `vaultask index --rebuild`", path)
	}
	return false, fmt.Sprintf("%s is not editable here: set it in config.yaml or %s", path, envName(path))
}

// envName is the variable that sets the key at path, as config names it.
func envName(path string) string {
	return "VAULTASK_" + strings.ToUpper(strings.Replace(path, ".", "__", 1))
}

// fieldError is a problem with one or more keys of a change.
type fieldError struct {
	Fields  []string `json:"fields"`
	Message string   `json:"message"`
}

// change is one key a PUT /admin/config body sets, its value a string, a
// json.Number or a bool.
type change struct {
	path  string
	value any
}

// maxChangeKeys bounds the keys one change may set: there are fewer
// editable keys than that.
const maxChangeKeys = 100

// decodeChange parses a PUT /admin/config body, an object shaped like the
// config file that sets some keys: {"retrieval":{"final_top_k":6}}. Every
// value is a string, a number or a boolean; a key given twice, a list, an
// object or null is refused, naming the key.
func decodeChange(body []byte) ([]change, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	bad := func(field, format string, args ...any) error {
		fe := &fieldError{Message: fmt.Sprintf(format, args...)}
		if field != "" {
			fe.Fields = []string{field}
		}
		return fe
	}
	open := func(what string) error {
		tok, err := dec.Token()
		if err != nil {
			return bad("", "the change is not valid JSON: %v", err)
		}
		if tok != json.Delim('{') {
			return bad("", "%s: want an object", what)
		}
		return nil
	}
	if err := open(`the change, like {"retrieval":{"final_top_k":6}},`); err != nil {
		return nil, err
	}
	var out []change
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("", "the change is not valid JSON: %v", err)
		}
		section := tok.(string) // an object's key is a string, or Token fails
		if err := open(fmt.Sprintf("section %q", section)); err != nil {
			return nil, &fieldError{Fields: []string{section}, Message: err.(*fieldError).Message}
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, bad("", "the change is not valid JSON: %v", err)
			}
			path := section + "." + tok.(string)
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, bad(path, "%s: not valid JSON: %v", path, err)
			}
			switch v.(type) {
			case string, json.Number, bool:
			default:
				return nil, bad(path, "%s: want a string, a number or a boolean", path)
			}
			if seen[path] {
				return nil, bad(path, "%s is given twice", path)
			}
			seen[path] = true
			if len(out) == maxChangeKeys {
				return nil, bad("", "the change sets more than %d keys", maxChangeKeys)
			}
			out = append(out, change{path: path, value: v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, bad("", "the change is not valid JSON: %v", err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad("", "the change is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("", "the change holds more than one JSON value")
	}
	return out, nil
}

// checkChange refuses each key of a change that /admin may not set, or set
// to that value, naming the key: not editable, unknown, set by the
// environment, of the wrong type, or a web provider without its key.
func (s *Server) checkChange(changes []change) []fieldError {
	a := s.opts.Admin
	var errs []fieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, fieldError{Fields: []string{path}, Message: fmt.Sprintf(format, args...)})
	}
	for _, c := range changes {
		running, known := a.Running[c.path]
		ok, why := editable(c.path)
		switch {
		case !ok:
			add(c.path, "%s", why)
			continue
		case !known:
			add(c.path, "unknown key %q", c.path)
			continue
		case slices.Contains(a.FromEnv, c.path):
			add(c.path, "%s is set by the environment (%s), which wins over /admin: change it there", c.path, envName(c.path))
			continue
		}
		if want := typeOf(running); typeOf(jsonValue(c.value)) != want && !(want == "number" && typeOf(jsonValue(c.value)) == "integer") {
			add(c.path, "%s=%s: want %s", c.path, show(c.value), article(want))
			continue
		}
		if c.path == "web.provider" {
			name, _ := c.value.(string)
			for _, p := range a.WebProviders {
				if p.Name == name && !p.Ready {
					add(c.path, "web.provider %s needs an API key: set %s first", name, p.KeyEnv)
				}
			}
		}
	}
	return errs
}

// jsonValue turns a decoded json.Number into the int or float64 it spells.
func jsonValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.Atoi(n.String()); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return v
}

// typeOf names a value's type as /admin's form treats it.
func typeOf(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case int:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	}
	return "other"
}

func article(typ string) string {
	if typ == "integer" {
		return "an integer"
	}
	return "a " + typ
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// overrides is an overrides document: sections of keys.
type overrides map[string]map[string]any

// parseOverrides reads an overrides file's text; empty text is no
// overrides.
func parseOverrides(data []byte) (overrides, error) {
	doc := overrides{}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc == nil {
		doc = overrides{}
	}
	return doc, nil
}

// canonical is an overrides document's text with sorted keys, so that two
// files that say the same compare equal.
func (o overrides) canonical() []byte {
	b, _ := json.MarshalIndent(o, "", "  ")
	return append(b, '\n')
}

func (o overrides) set(path string, v any) {
	section, key, _ := strings.Cut(path, ".")
	if o[section] == nil {
		o[section] = map[string]any{}
	}
	o[section][key] = v
}

// readOverrides reads the overrides file as it is now; a missing file is
// no overrides.
func (s *Server) readOverrides() (overrides, error) {
	data, err := os.ReadFile(s.opts.Admin.OverridesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return overrides{}, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := parseOverrides(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not an overrides document: %w", s.opts.Admin.OverridesFile, err)
	}
	return doc, nil
}

// writeFileAtomic replaces path with data, readable by its owner alone: a
// temporary file beside it, synced, renamed over it, the directory synced,
// so a crash leaves the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // not every file system syncs a directory
		d.Close()
	}
	return nil
}

// setting is one editable key as GET /admin/config reports it.
type setting struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Running any    `json:"running"`
	// Next is the value after a restart, with the overrides file as it is.
	Next any `json:"next"`
	// Env names the variable that sets it, when one does: /admin cannot.
	Env string `json:"env,omitempty"`
}

// adminState is GET /admin/config's answer, and PUT's after a save.
type adminState struct {
	OverridesFile string `json:"overrides_file"`
	// PendingRestart is set when the overrides file says other than it did
	// when this process started: the changes apply on restart.
	PendingRestart   bool          `json:"pending_restart"`
	Settings         []setting     `json:"settings"`
	GenerationModels []string      `json:"generation_models"`
	WebProviders     []WebProvider `json:"web_providers"`
	// OverridesError says why the overrides file cannot be used as it is.
	OverridesError string `json:"overrides_error,omitempty"`
}

func (s *Server) adminState() adminState {
	a := s.opts.Admin
	st := adminState{OverridesFile: a.OverridesFile, GenerationModels: a.GenerationModels, WebProviders: a.WebProviders}
	if st.GenerationModels == nil {
		st.GenerationModels = []string{}
	}
	if st.WebProviders == nil {
		st.WebProviders = []WebProvider{}
	}
	next := a.Running
	booted, _ := parseOverrides(a.Booted)
	switch doc, err := s.readOverrides(); {
	case err != nil:
		s.log.Error("admin: read the overrides file", "err", err)
		st.OverridesError = "the overrides file cannot be read; the server's log says why"
	default:
		st.PendingRestart = !bytes.Equal(doc.canonical(), booted.canonical())
		if values, err := a.Check(doc.canonical()); err != nil {
			st.OverridesError = "the overrides file does not pass validation: " + err.Error()
		} else {
			next = values
		}
	}
	for path, v := range a.Running {
		if ok, _ := editable(path); !ok || typeOf(v) == "other" {
			continue
		}
		set := setting{Path: path, Type: typeOf(v), Running: v, Next: next[path]}
		if slices.Contains(a.FromEnv, path) {
			set.Env = envName(path)
		}
		st.Settings = append(st.Settings, set)
	}
	slices.SortFunc(st.Settings, func(x, y setting) int { return strings.Compare(x.Path, y.Path) })
	return st
}

func (s *Server) getAdminConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.adminState())
}

// putAdminConfig saves a change to the overrides file: each key checked,
// the whole resulting document validated as the next start would, then
// written atomically. It applies on restart.
func (s *Server) putAdminConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	changes, err := decodeChange(body)
	if err != nil {
		writeFieldErrors(w, []fieldError{*err.(*fieldError)})
		return
	}
	if errs := s.checkChange(changes); len(errs) > 0 {
		writeFieldErrors(w, errs)
		return
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	doc, err := s.readOverrides()
	if err != nil {
		s.log.Error("admin: read the overrides file", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "", "", "the overrides file cannot be read; the server's log says why")
		return
	}
	for _, c := range changes {
		doc.set(c.path, c.value)
	}
	text := doc.canonical()
	if _, err := s.opts.Admin.Check(text); err != nil {
		writeFieldErrors(w, s.validationErrors(err))
		return
	}
	if err := writeFileAtomic(s.opts.Admin.OverridesFile, text); err != nil {
		s.log.Error("admin: write the overrides file", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "", "", "the overrides file could not be written; the server's log says why")
		return
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	s.log.Info("admin: overrides saved; they apply on restart", "file", s.opts.Admin.OverridesFile, "keys", paths)
	writeJSON(w, http.StatusOK, s.adminState())
}

// sourcePrefix is the "file:line: " a config error starts with; the line
// of a document the page assembled means nothing to its user.
var sourcePrefix = regexp.MustCompile(`^[^\s:]+:\d+: `)

// validationErrors splits the startup validation's joined error into its
// problems, each with the editable keys it names.
func (s *Server) validationErrors(err error) []fieldError {
	var leaves []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		leaves = append(leaves, e)
	}
	walk(err)
	var out []fieldError
	for _, e := range leaves {
		msg := sourcePrefix.ReplaceAllString(e.Error(), "")
		fe := fieldError{Fields: []string{}, Message: msg}
		for path := range s.opts.Admin.Running {
			if ok, _ := editable(path); ok && regexp.MustCompile(`\b`+regexp.QuoteMeta(path)+`\b`).MatchString(msg) {
				fe.Fields = append(fe.Fields, path)
			}
		}
		slices.SortFunc(fe.Fields, func(a, b string) int { return strings.Index(msg, a) - strings.Index(msg, b) })
		out = append(out, fe)
	}
	return out
}

// writeFieldErrors answers 400 with the first problem in OpenAI's error
// shape, its key as the param, and every problem under "errors".
func writeFieldErrors(w http.ResponseWriter, errs []fieldError) {
	first := errs[0]
	body := errorBody("invalid_request_error", strings.Join(first.Fields, ","), "invalid_setting", first.Message)
	for i := range errs {
		if errs[i].Fields == nil {
			errs[i].Fields = []string{}
		}
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": body["error"], "errors": errs})
}

func (e *fieldError) Error() string { return e.Message }
