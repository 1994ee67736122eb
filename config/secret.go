package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// redacted stands in for a secret that is set, so output still shows
// whether it is.
const redacted = "[redacted]"

// Secret is a value read only from the environment. Every way of printing or
// encoding it (fmt verbs, slog, JSON, YAML) shows [redacted], so logging a
// Config cannot leak it; Reveal is the one way to the value.
type Secret string

// Reveal returns the secret itself, for the client that needs it.
func (s Secret) Reveal() string { return string(s) }

// String returns [redacted], or "" when the secret is not set.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v, which bypasses String, from printing the value.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue redacts the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText redacts the secret in JSON and YAML encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// String renders the configuration one "section.key: value" line per key,
// secrets redacted.
func (c Config) String() string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f.path())
		b.WriteString(": ")
		b.WriteString(formatValue(f.value(&c).Interface()))
		b.WriteByte('\n')
	}
	return b.String()
}

// LogValue groups the configuration by section for slog, secrets redacted.
func (c Config) LogValue() slog.Value {
	var groups []slog.Attr
	var attrs []any
	for i, f := range fields {
		attrs = append(attrs, slog.Any(f.key, f.value(&c).Interface()))
		if i == len(fields)-1 || fields[i+1].section != f.section {
			groups = append(groups, slog.Group(f.section, attrs...))
			attrs = nil
		}
	}
	return slog.GroupValue(groups...)
}

func formatValue(v any) string {
	switch v := v.(type) {
	case Secret:
		return strconv.Quote(v.String())
	case string:
		return strconv.Quote(v)
	case []string:
		// JSON, the same syntax a list takes in an environment variable;
		// marshalling a []string cannot fail.
		out, _ := json.Marshal(v)
		return string(out)
	}
	return fmt.Sprint(v)
}
