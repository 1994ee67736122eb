package allowweb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// Name is the parameter's one spelling.
const Name = "allow_web"

// Error is an allow_web that cannot be read: a 400 naming it, or for MCP
// a tool or resource error. Every error the package makes is one.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// Param reads allow_web from a request's query; false when absent.
func Param(r *http.Request) (bool, error) {
	return Query(r.URL.RawQuery)
}

// Query reads allow_web from a raw query string, pair by pair in
// order. A query that cannot be read at all (a bad escape, a ';') is
// refused too: url.ParseQuery would drop the pair, allow_web with it.
func Query(rawQuery string) (bool, error) {
	allow, _, err := ReadQuery(rawQuery, func(string) error { return nil })
	return allow, err
}

// ReadQuery is Query saying whether allow_web was given, which calls
// other with the name of each other parameter and stops at the first error
// it returns (returned as it is, not as an *Error).
func ReadQuery(rawQuery string, other func(name string) error) (allow, given bool, err error) {
	var value string
	times := 0
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return false, false, errorf("the query holds a ';' (%q): separate parameters with '&', so that allow_web can be read", pair)
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return false, false, errorf("the query's parameter name %q cannot be read (%v), so allow_web cannot be", rawName, err)
		}
		if err := checkName(name); err != nil {
			return false, false, err
		}
		if name != Name {
			if err := other(name); err != nil {
				return false, false, err
			}
			continue
		}
		if value, err = url.QueryUnescape(rawValue); err != nil {
			return false, false, errorf("allow_web=%s cannot be read (%v): want true or false", rawValue, err)
		}
		times++
	}
	switch {
	case times == 0:
		return false, false, nil
	case times > 1:
		return false, false, errorf("allow_web given %d times: give it once, true or false", times)
	case value == "true":
		return true, true, nil
	case value == "false":
		return false, true, nil
	}
	return false, false, errorf("allow_web=%q: want true or false", value)
}

// JSON reads allow_web from the top level of a JSON object; false
// when it is absent, when obj is empty or null. Anything but an object is
// refused. Keys are compared as encoding/json decodes them, escapes and
// all, and every one is seen: encoding/json would match "ALLOW_WEB" to the
// field and let the last of two win.
func JSON(obj []byte) (bool, error) {
	allow, _, err := ReadJSON(obj)
	return allow, err
}

// ReadJSON is JSON saying whether allow_web was given.
func ReadJSON(obj []byte) (allow, given bool, err error) {
	if len(bytes.TrimSpace(obj)) == 0 {
		return false, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	switch {
	case err != nil:
		return false, false, errorf("allow_web cannot be read: the JSON is malformed (%v)", err)
	case tok == nil:
		return false, false, nil
	case tok != json.Delim('{'):
		return false, false, errorf("allow_web cannot be read: want a JSON object, not %s", jsonKind(tok))
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return false, false, err
		}
		if err := checkName(key); err != nil {
			return false, false, err
		}
		if key != Name {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false, false, errorf("allow_web cannot be read: the JSON is malformed (%v)", err)
			}
			continue
		}
		if given {
			return false, false, errorf("allow_web given twice: give it once, true or false")
		}
		v, err := dec.Token()
		if err != nil {
			return false, false, errorf("allow_web cannot be read: the JSON is malformed (%v)", err)
		}
		b, ok := v.(bool)
		if !ok {
			return false, false, errorf("allow_web must be true or false (a JSON boolean), not %s", jsonKind(v))
		}
		allow, given = b, true
	}
	return allow, given, nil
}

// objectKey reads the next key of an object whose '{' dec has read.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return "", errorf("allow_web cannot be read: the JSON is malformed (%v)", err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", errorf("allow_web cannot be read: the JSON is malformed (a key is %s)", jsonKind(tok))
	}
	return key, nil
}

// jsonKind names a JSON token for a message: the value itself when short.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		if len(v) > 20 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", v)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// checkName refuses a parameter name that is allow_web but for the
// case of its letters or the characters between them ("ALLOW_WEB",
// "Allow-Web", "allowWeb"): a lenient reader would take it for allow_web,
// a strict one for another parameter, and either reading may widen what
// the caller sees.
func checkName(name string) error {
	if name == Name || !spellsAllowWeb(name) {
		return nil
	}
	return errorf("%q is not a parameter: allow_web is spelled exactly so, in lower case with an underscore", name)
}

// spellsAllowWeb reports whether the letters and digits of name, in any
// case, are "allowweb".
func spellsAllowWeb(name string) bool {
	const want = "allowweb"
	i := 0
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		if i == len(want) || unicode.ToLower(r) != rune(want[i]) {
			return false
		}
		i++
	}
	return i == len(want)
}
