package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/vaultask/vaultask/internal/atomicfile"
)

// Editable says whether a browser (/admin) may set the key at path in the
// overrides file, and why not when it may not: the generation and rerank
// models, whether and how to search the web, and the retrieval tuning.
// Where the vault, the index and the API are, the embedding model (it
// decides every stored vector) and every secret come from config.yaml and
// the environment only. Anything not named here is not editable, so a new
// key stays out of a browser's reach until it is added.
func Editable(path string) (bool, string) {
	section, key, _ := strings.Cut(path, ".")
	switch {
	case path == "models.generation", path == "models.generation_verdict", path == "models.rerank", path == "web.enabled", path == "web.provider", section == "retrieval":
		return true, ""
	case section == "vault", section == "index", section == "api":
		return false, fmt.Sprintf("%s is not editable here: where the vault, the index and the API are, and every secret, come from config.yaml and the environment only", path)
	case section == "models" && (strings.HasPrefix(key, "embedding") || key == "builtin_dir"):
		return false, fmt.Sprintf("%s is not editable here: the embedding model decides every vector in the index, and changing it means `vaultask index --rebuild`", path)
	}
	return false, fmt.Sprintf("%s is not editable here: set it in config.yaml or %s", path, EnvName(path))
}

// Overrides is the overrides file: the layer between config.yaml and the
// environment that /admin writes and the next start reads. It remembers
// the file as this process started with it, to tell a saved change that
// waits for a restart, and serialises saves.
type Overrides struct {
	path string
	// booted is the canonical text of the file at start; nil when that
	// text was not an overrides document, which no current text equals.
	booted []byte
	mu     sync.Mutex
}

// OpenOverrides reads the overrides file at path as this process starts
// with it; a missing file is an empty one.
func OpenOverrides(path string) (*Overrides, error) {
	o := &Overrides{path: path}
	doc, err := o.read()
	var unparsable *overridesSyntaxError
	switch {
	case errors.As(err, &unparsable):
	case err != nil:
		return nil, fmt.Errorf("read overrides: %w", err)
	default:
		o.booted = doc.canonical()
	}
	return o, nil
}

// Path is the file's path.
func (o *Overrides) Path() string { return o.path }

// Editable is the package's Editable, for a caller handed an *Overrides.
func (o *Overrides) Editable(path string) (bool, string) { return Editable(path) }

// Current returns the file's document as it is now, in canonical form (keys
// sorted, indented), and whether it says other than it did at start: the
// change that waits for a restart.
func (o *Overrides) Current() (doc []byte, pending bool, err error) {
	d, err := o.read()
	if err != nil {
		return nil, false, err
	}
	doc = d.canonical()
	return doc, !bytes.Equal(doc, o.booted), nil
}

// Save sets each key (by path, such as "retrieval.final_top_k") to its
// value (a string, json.Number or bool) in the file as it is now, keeping
// the keys it does not name, and replaces the file atomically once check
// accepts the whole resulting document; check's error is returned as it
// is. A key a browser may not set is refused before anything is read.
func (o *Overrides) Save(changes map[string]any, check func(doc []byte) error) error {
	for path := range changes {
		if ok, why := Editable(path); !ok {
			return errors.New(why)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	doc, err := o.read()
	if err != nil {
		return err
	}
	for path, v := range changes {
		doc.set(path, v)
	}
	text := doc.canonical()
	if err := check(text); err != nil {
		return err
	}
	return atomicfile.WriteFile(o.path, text, 0o600)
}

// overridesDoc is an overrides document: sections of keys.
type overridesDoc map[string]map[string]any

// overridesSyntaxError is a file that is not an overrides document.
type overridesSyntaxError struct {
	path string
	err  error
}

func (e *overridesSyntaxError) Error() string {
	return fmt.Sprintf("%s is not an overrides document: %v", e.path, e.err)
}

func (e *overridesSyntaxError) Unwrap() error { return e.err }

// read reads the file as it is now; a missing file is no overrides, and so
// is empty text.
func (o *Overrides) read() (overridesDoc, error) {
	data, err := os.ReadFile(o.path)
	if errors.Is(err, fs.ErrNotExist) {
		return overridesDoc{}, nil
	}
	if err != nil {
		return nil, err
	}
	doc := overridesDoc{}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, &overridesSyntaxError{path: o.path, err: err}
	}
	if doc == nil {
		doc = overridesDoc{}
	}
	return doc, nil
}

// canonical is the document's text with sorted keys, so that two files
// that say the same compare equal.
func (d overridesDoc) canonical() []byte {
	b, _ := json.MarshalIndent(d, "", "  ")
	return append(b, '\n')
}

func (d overridesDoc) set(path string, v any) {
	section, key, _ := strings.Cut(path, ".")
	if d[section] == nil {
		d[section] = map[string]any{}
	}
	d[section][key] = v
}
