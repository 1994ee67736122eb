package transport

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// AdminOptions configure /admin's data, GET and PUT /admin/config. The
// configuration itself is cmd's business: transport sees its values by
// path, the overrides file through Overrides and a Check that runs the
// startup validation.
type AdminOptions struct {
	// Key is required as X-API-Key (api.admin_key). Without one /admin's
	// data is refused with 503: it fails closed, never open.
	Key string
	// Overrides is the file /admin writes and the next start reads, with
	// the rule of which keys it may set there.
	Overrides Overrides
	// Running are the values this process runs with, by path
	// ("retrieval.final_top_k"), secrets left out: strings, ints, float64s
	// and bools for the keys /admin edits.
	Running map[string]any
	// FromEnv are the keys set by VAULTASK_ variables, each path with the
	// variable that sets it (config.EnvKeys): the environment wins over the
	// overrides file, so /admin refuses to change them and names the
	// variable instead.
	FromEnv map[string]string
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

// Overrides is the overrides file /admin saves changes to, which the next
// start applies, and the rule of which keys a browser may set in it. Both
// belong to the configuration: *config.Overrides is vaultask's.
type Overrides interface {
	// Path is the file's path, which the page shows.
	Path() string
	// Editable says whether /admin may set the key at path, and if not,
	// why not.
	Editable(path string) (ok bool, why string)
	// Current is the file's document as it is now, canonical, and whether
	// it says other than it did when this process started.
	Current() (doc []byte, pending bool, err error)
	// Save sets each key, by path, to its value (a string, json.Number or
	// bool) in the file as it is now. Once the file is read, check runs
	// on the whole resulting document; only if it passes is the file
	// replaced, atomically. check's error is returned as it is.
	Save(changes map[string]any, check func(doc []byte) error) error
}

// WebProvider is a web search provider as /admin offers it.
type WebProvider struct {
	Name string `json:"name"`
	// KeyEnv is the environment variable holding its API key, if it needs one.
	KeyEnv string `json:"key_env,omitempty"`
	// Ready is set when it needs no key or its key is set.
	Ready bool `json:"ready"`
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
	st := adminState{OverridesFile: a.Overrides.Path(), GenerationModels: a.GenerationModels, WebProviders: a.WebProviders}
	if st.GenerationModels == nil {
		st.GenerationModels = []string{}
	}
	if st.WebProviders == nil {
		st.WebProviders = []WebProvider{}
	}
	next := a.Running
	switch doc, pending, err := a.Overrides.Current(); {
	case err != nil:
		s.log.Error("admin: read the overrides file", keyErr, err)
		st.OverridesError = "the overrides file cannot be read; the server's log says why"
	default:
		st.PendingRestart = pending
		if values, err := a.Check(doc); err != nil {
			st.OverridesError = "the overrides file does not pass validation: " + err.Error()
		} else {
			next = values
		}
	}
	st.Settings = s.settings(next)
	return st
}

// settings are the editable keys with their running and next values, by
// path.
func (s *Server) settings(next map[string]any) []setting {
	a := s.opts.Admin
	var out []setting
	for path, v := range a.Running {
		if ok, _ := a.Overrides.Editable(path); !ok || typeOf(v) == "other" {
			continue
		}
		set := setting{Path: path, Type: typeOf(v), Running: v, Next: next[path]}
		set.Env = a.FromEnv[path]
		out = append(out, set)
	}
	slices.SortFunc(out, func(x, y setting) int { return strings.Compare(x.Path, y.Path) })
	return out
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
	if !s.saveChange(w, changes) {
		return
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	s.log.Info("admin: overrides saved; they apply on restart", keyFile, s.opts.Admin.Overrides.Path(), keyKeys, paths)
	writeJSON(w, http.StatusOK, s.adminState())
}

// saveChange writes a checked change into the overrides file once the
// whole resulting document passes Check; otherwise it answers why (400
// for what Check refuses, 500 for a file that cannot be read or written)
// and reports false.
func (s *Server) saveChange(w http.ResponseWriter, changes []change) bool {
	a := s.opts.Admin
	values := make(map[string]any, len(changes))
	for _, c := range changes {
		values[c.path] = c.value
	}
	read := false // check runs only after the file was read
	var invalid error
	err := a.Overrides.Save(values, func(doc []byte) error {
		read = true
		_, invalid = a.Check(doc)
		return invalid
	})
	switch {
	case invalid != nil:
		writeFieldErrors(w, s.validationErrors(invalid))
	case err != nil && !read:
		s.log.Error("admin: read the overrides file", keyErr, err)
		writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "the overrides file cannot be read; the server's log says why"})
	case err != nil:
		s.log.Error("admin: write the overrides file", keyErr, err)
		writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "the overrides file could not be written; the server's log says why"})
	}
	return err == nil
}

// sourcePrefix is the "file:line: " a config error starts with; the line
// of a document the page assembled means nothing to its user.
var sourcePrefix = regexp.MustCompile(`^[^\s:]+:\d+: `)

// validationErrors splits the startup validation's joined error into its
// problems, each with the editable keys it names.
func (s *Server) validationErrors(err error) []fieldError {
	var out []fieldError
	for _, e := range leafErrors(err) {
		msg := sourcePrefix.ReplaceAllString(e.Error(), "")
		fe := fieldError{Fields: []string{}, Message: msg}
		for path := range s.opts.Admin.Running {
			if ok, _ := s.opts.Admin.Overrides.Editable(path); ok && regexp.MustCompile(`\b`+regexp.QuoteMeta(path)+`\b`).MatchString(msg) {
				fe.Fields = append(fe.Fields, path)
			}
		}
		slices.SortFunc(fe.Fields, func(a, b string) int { return strings.Index(msg, a) - strings.Index(msg, b) })
		out = append(out, fe)
	}
	return out
}

// leafErrors are the errors errors.Join joined into err, however deep,
// each on its own.
func leafErrors(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var leaves []error
	for _, inner := range j.Unwrap() {
		leaves = append(leaves, leafErrors(inner)...)
	}
	return leaves
}

// writeFieldErrors answers 400 with the first problem in OpenAI's error
// shape, its key as the param, and every problem under "errors".
func writeFieldErrors(w http.ResponseWriter, errs []fieldError) {
	first := errs[0]
	body := apiError{Type: invalidRequest, Param: strings.Join(first.Fields, ","), Code: "invalid_setting", Message: first.Message}.body()
	for i := range errs {
		if errs[i].Fields == nil {
			errs[i].Fields = []string{}
		}
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": body["error"], "errors": errs})
}
