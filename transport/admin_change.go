package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// fieldError is a problem with one or more keys of a change.
type fieldError struct {
	Fields  []string `json:"fields"`
	Message string   `json:"message"`
}

func (e *fieldError) Error() string { return e.Message }

// changeError is a problem with the key at field ("" for the change as a
// whole).
func changeError(field, format string, args ...any) error {
	fe := &fieldError{Message: fmt.Sprintf(format, args...)}
	if field != "" {
		fe.Fields = []string{field}
	}
	return fe
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
	d := changeDecoder{dec: json.NewDecoder(bytes.NewReader(body)), seen: map[string]bool{}}
	d.dec.UseNumber()
	if err := d.open(`the change, like {"retrieval":{"final_top_k":6}},`, ""); err != nil {
		return nil, err
	}
	for d.dec.More() {
		if err := d.section(); err != nil {
			return nil, err
		}
	}
	if err := d.close(); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, changeError("", "the change holds more than one JSON value")
	}
	return d.out, nil
}

// changeDecoder reads a change token by token, so that a key given twice
// is seen (decoding into a map would keep the last) and each problem names
// its key.
type changeDecoder struct {
	dec  *json.Decoder
	out  []change
	seen map[string]bool
}

// open reads the '{' that starts what (the change, or a section, which is
// then the field at fault).
func (d *changeDecoder) open(what, field string) error {
	tok, err := d.dec.Token()
	if err != nil {
		return changeError(field, "the change is not valid JSON: %v", err)
	}
	if tok != json.Delim('{') {
		return changeError(field, "%s: want an object", what)
	}
	return nil
}

// close reads the '}' that ends an object whose members are read.
func (d *changeDecoder) close() error {
	if _, err := d.dec.Token(); err != nil {
		return changeError("", "the change is not valid JSON: %v", err)
	}
	return nil
}

// section reads one section and its keys: "retrieval":{"final_top_k":6}.
func (d *changeDecoder) section() error {
	tok, err := d.dec.Token()
	if err != nil {
		return changeError("", "the change is not valid JSON: %v", err)
	}
	section := tok.(string) // an object's key is a string, or Token fails
	if err := d.open(fmt.Sprintf("section %q", section), section); err != nil {
		return err
	}
	for d.dec.More() {
		if err := d.key(section); err != nil {
			return err
		}
	}
	return d.close()
}

// key reads one key of a section and its value.
func (d *changeDecoder) key(section string) error {
	tok, err := d.dec.Token()
	if err != nil {
		return changeError("", "the change is not valid JSON: %v", err)
	}
	path := section + "." + tok.(string)
	var v any
	if err := d.dec.Decode(&v); err != nil {
		return changeError(path, "%s: not valid JSON: %v", path, err)
	}
	switch v.(type) {
	case string, json.Number, bool:
	default:
		return changeError(path, "%s: want a string, a number or a boolean", path)
	}
	if d.seen[path] {
		return changeError(path, "%s is given twice", path)
	}
	d.seen[path] = true
	if len(d.out) == maxChangeKeys {
		return changeError("", "the change sets more than %d keys", maxChangeKeys)
	}
	d.out = append(d.out, change{path: path, value: v})
	return nil
}

// checkChange refuses each key of a change that /admin may not set, or set
// to that value, naming the key: not editable, unknown, set by the
// environment, of the wrong type, or a web provider without its key.
func (s *Server) checkChange(changes []change) []fieldError {
	var errs []fieldError
	for _, c := range changes {
		if msg := s.refuseKey(c); msg != "" {
			errs = append(errs, fieldError{Fields: []string{c.path}, Message: msg})
		}
	}
	return errs
}

// refuseKey says why /admin may not set one key to its value, or "".
func (s *Server) refuseKey(c change) string {
	a := s.opts.Admin
	running, known := a.Running[c.path]
	if ok, why := a.Overrides.Editable(c.path); !ok {
		return why
	}
	switch {
	case !known:
		return fmt.Sprintf("unknown key %q", c.path)
	case a.FromEnv[c.path] != "":
		return fmt.Sprintf("%s is set by the environment (%s), which wins over /admin: change it there", c.path, a.FromEnv[c.path])
	}
	if want, got := typeOf(running), typeOf(jsonValue(c.value)); got != want && !(want == "number" && got == "integer") {
		return fmt.Sprintf("%s=%s: want %s", c.path, show(c.value), article(want))
	}
	if c.path == "web.provider" {
		name, _ := c.value.(string)
		for _, p := range a.WebProviders {
			if p.Name == name && !p.Ready {
				return fmt.Sprintf("web.provider %s needs an API key: set %s first", name, p.KeyEnv)
			}
		}
	}
	return ""
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
