package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Environment variables. Every VAULTASK_ variable is either a configuration
// key (VAULTASK_<SECTION>__<KEY>) or one of the names below; anything else is
// an unknown-key error, so a typo can't silently fall back to a default.
const (
	EnvPrefix = "VAULTASK_"
	// EnvConfigFile names config.yaml for the CLI.
	EnvConfigFile = "VAULTASK_CONFIG"
	// EnvOverridesFile names the overrides file; see OverridesFile.
	EnvOverridesFile = "VAULTASK_OVERRIDES_FILE"
	// API keys of the model and web search providers, read by whoever
	// builds those clients.
	EnvOpenRouterAPIKey = "VAULTASK_OPENROUTER_API_KEY"
	EnvOpenAIAPIKey     = "VAULTASK_OPENAI_API_KEY"
	EnvOllamaAPIKey     = "VAULTASK_OLLAMA_API_KEY"
	EnvTavilyAPIKey     = "VAULTASK_TAVILY_API_KEY"
	EnvBraveAPIKey      = "VAULTASK_BRAVE_API_KEY"
	// EnvRequireModels=1 makes the built-in models' tests fail instead of
	// skipping when the model files are missing (scripts/test.sh sets it,
	// and the commands those tests start inherit it); vaultask ignores it.
	EnvRequireModels = "VAULTASK_REQUIRE_MODELS"
	// EnvRequireCorpus=1 does the same for the tests that read the
	// LiveSync corpus dumps (tstest/corpustext.Require), and EnvCorpusDir
	// names the directory of those dumps; vaultask ignores both.
	EnvRequireCorpus = "VAULTASK_REQUIRE_CORPUS"
	EnvCorpusDir     = "VAULTASK_CORPUS_DIR"
)

// DefaultOverridesFile is where the overrides file lives when
// VAULTASK_OVERRIDES_FILE is unset: the container's data volume.
const DefaultOverridesFile = "/data/overrides.json"

// envSeparator splits a variable name into section and key.
const envSeparator = "__"

// EnvName is the environment variable that sets the key at path:
// VAULTASK_RETRIEVAL__FINAL_TOP_K for "retrieval.final_top_k", the section
// and the key upper-cased and joined by a double underscore. It is the one
// spelling of that rule: the variables read, the errors and /admin's page
// all name a key's variable through it. It spells one for an unknown path
// too, for a message that names where a key would go.
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.Replace(path, ".", envSeparator, 1))
}

// reservedEnv is the one list of VAULTASK_ variables that are not
// configuration keys.
var reservedEnv = []string{
	EnvConfigFile,
	EnvOverridesFile,
	EnvOpenRouterAPIKey,
	EnvOpenAIAPIKey,
	EnvOllamaAPIKey,
	EnvTavilyAPIKey,
	EnvBraveAPIKey,
	EnvRequireModels,
	EnvRequireCorpus,
	EnvCorpusDir,
}

// Load returns the effective configuration: Default(), then the config.yaml
// at path (skipped when path is ""), then the overrides file named by
// OverridesFile(env) (a missing one is fine), then the VAULTASK_ variables in
// env (formatted like os.Environ), then Validate. The error lists every
// problem found across the layers.
func Load(path string, env []string) (Config, error) {
	c := Default()
	var errs []error
	if path != "" {
		if data, err := os.ReadFile(path); err != nil {
			errs = append(errs, fmt.Errorf("read config: %w", err))
		} else {
			errs = append(errs, c.applyYAML(data, path))
		}
	}
	overrides := OverridesFile(env)
	switch data, err := os.ReadFile(overrides); {
	case errors.Is(err, fs.ErrNotExist):
		// The admin console has saved nothing yet.
	case err != nil:
		errs = append(errs, fmt.Errorf("read overrides: %w", err))
	default:
		errs = append(errs, c.applyJSON(data, overrides))
	}
	errs = append(errs, c.applyEnv(env))
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// OverridesFile is the overrides file's path: VAULTASK_OVERRIDES_FILE from
// env, or DefaultOverridesFile when it is unset or empty.
func OverridesFile(env []string) string {
	path := DefaultOverridesFile
	for _, kv := range env {
		if name, value, _ := strings.Cut(kv, "="); name == EnvOverridesFile && value != "" {
			path = value
		}
	}
	return path
}

// Parse applies a config.yaml document to Default(); source names the
// document in errors. It does not validate, because a later layer may still
// fix a value: validate the merged result.
func Parse(data []byte, source string) (Config, error) {
	c := Default()
	if err := c.applyYAML(data, source); err != nil {
		return Config{}, err
	}
	return c, nil
}

// WithOverrides applies an overrides document, JSON with config.yaml's shape
// ({"retrieval":{"final_top_k":6}}), to c; source names it in errors. The
// admin console checks a proposed document with
// base.WithOverrides(doc, "proposed overrides"), then WithEnv and Validate.
// Empty data overrides nothing.
func (c Config) WithOverrides(data []byte, source string) (Config, error) {
	if err := c.applyJSON(data, source); err != nil {
		return Config{}, err
	}
	return c, nil
}

// WithEnv applies the VAULTASK_<SECTION>__<KEY> variables in env, formatted
// like os.Environ, to c. Lists are JSON arrays, booleans take
// strconv.ParseBool's syntax and durations Go's ("90m").
func (c Config) WithEnv(env []string) (Config, error) {
	if err := c.applyEnv(env); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Set parses value into the key at path, such as "retrieval.fts_weight", the
// way an environment variable's text is parsed (lists are JSON arrays,
// booleans take strconv.ParseBool's syntax, durations Go's), with the same
// error texts, so that a caller setting keys by name (an A/B arm) needs no
// list of its own and a new key is settable as soon as it exists. A secret
// is refused: secrets are read only from the environment. It does not
// validate, because a later key may still fix a value: validate the result.
func (c *Config) Set(path, value string) error {
	f, known := fieldsByPath[path]
	switch section, _, _ := strings.Cut(path, "."); {
	case !known && !sections[section]:
		return fmt.Errorf("unknown section %q", section)
	case !known:
		return unknownKey(path)
	case f.secret():
		return fmt.Errorf("%s is a secret, and secrets are read only from the environment: set %s instead", path, EnvName(path))
	}
	if err := f.setFromEnv(c, value); err != nil {
		return fmt.Errorf("%s=%q: %w", path, value, err)
	}
	return nil
}

func (c *Config) applyYAML(data []byte, source string) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", source, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return fmt.Errorf("%s: %w", source, err)
	default:
		return fmt.Errorf("%s:%d: a second YAML document; config holds one", source, next.Line)
	}
	return c.applyDocument(doc.Content[0], source)
}

func (c *Config) applyJSON(data []byte, source string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	root, err := parseJSON(data, source)
	if err != nil {
		return err
	}
	return c.applyDocument(root, source)
}

// applyDocument sets each key of a parsed config.yaml or overrides document
// on c, with an error for every unknown section or key, repeated key, secret
// and mistyped value.
func (c *Config) applyDocument(root *yaml.Node, source string) error {
	root = resolveAlias(root)
	if isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: got %s, want a mapping of sections", source, root.Line, describeNode(root))
	}
	var errs []error
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		name, body := root.Content[i], resolveAlias(root.Content[i+1])
		at := fmt.Sprintf("%s:%d", source, name.Line)
		switch first, repeated := seen[name.Value]; {
		case name.Kind != yaml.ScalarNode:
			errs = append(errs, fmt.Errorf("%s: got %s, want a section name", at, describeNode(name)))
		case !sections[name.Value]:
			errs = append(errs, fmt.Errorf("%s: unknown section %q", at, name.Value))
		case repeated:
			errs = append(errs, fmt.Errorf("%s: section %q repeated (first at line %d)", at, name.Value, first))
		case isNull(body):
			seen[name.Value] = name.Line
		case body.Kind != yaml.MappingNode:
			seen[name.Value] = name.Line
			errs = append(errs, fmt.Errorf("%s: section %q: got %s, want a mapping of keys", at, name.Value, describeNode(body)))
		default:
			seen[name.Value] = name.Line
			errs = append(errs, c.applySection(name.Value, body, source))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) applySection(section string, body *yaml.Node, source string) error {
	var errs []error
	seen := map[string]int{}
	for i := 0; i+1 < len(body.Content); i += 2 {
		name, value := body.Content[i], body.Content[i+1]
		at := fmt.Sprintf("%s:%d", source, name.Line)
		path := section + "." + name.Value
		f, known := fieldsByPath[path]
		switch first, repeated := seen[path]; {
		case name.Kind != yaml.ScalarNode:
			errs = append(errs, fmt.Errorf("%s: section %q: got %s, want a key name", at, section, describeNode(name)))
		case !known:
			errs = append(errs, fmt.Errorf("%s: %w", at, unknownKey(path)))
		case repeated:
			errs = append(errs, fmt.Errorf("%s: key %q repeated (first at line %d)", at, path, first))
		case f.secret():
			seen[path] = name.Line
			errs = append(errs, fmt.Errorf("%s: %s is a secret, and secrets are read only from the environment: set %s instead", at, path, EnvName(path)))
		default:
			seen[path] = name.Line
			if err := f.setFromNode(c, value); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
			}
		}
	}
	return errors.Join(errs...)
}

// setFromNode decodes a document's value into the key. A null (a key left
// empty in YAML) clears a string or list and is an error for anything else.
func (f field) setFromNode(c *Config, n *yaml.Node) error {
	n = resolveAlias(n)
	v := f.value(c)
	if isNull(n) {
		switch f.typ.Kind() {
		case reflect.String:
			v.SetString("")
			return nil
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{}))
			return nil
		}
	}
	if !f.accepts(n) {
		return f.typeError(n)
	}
	decoded := reflect.New(f.typ)
	if err := n.Decode(decoded.Interface()); err != nil {
		return f.typeError(n)
	}
	v.Set(decoded.Elem())
	return nil
}

// accepts reports whether n has the right shape and YAML tag for the key, so
// that "8" (a string) is not an integer and yes/no are not booleans, in YAML
// and JSON alike.
func (f field) accepts(n *yaml.Node) bool {
	if f.typ.Kind() == reflect.Slice {
		return n.Kind == yaml.SequenceNode
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	tag := n.ShortTag()
	switch {
	case f.typ == durationType:
		return tag == "!!str"
	case f.typ.Kind() == reflect.Int:
		return tag == "!!int"
	case f.typ.Kind() == reflect.Float64:
		return tag == "!!int" || tag == "!!float"
	case f.typ.Kind() == reflect.Bool:
		return tag == "!!bool"
	}
	// Any other scalar reads as a string: `database: 2024` means "2024".
	return true
}

func (f field) typeError(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return fmt.Errorf("%s=%q: not %s", f.path(), n.Value, f.want())
	}
	return fmt.Errorf("%s: got %s, want %s", f.path(), describeNode(n), f.want())
}

func (c *Config) applyEnv(env []string) error {
	var errs []error
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || slices.Contains(reservedEnv, name) {
			continue
		}
		f, known := fieldsByEnv[name]
		if !known {
			errs = append(errs, unknownEnv(name))
			continue
		}
		if err := f.setFromEnv(c, value); err != nil {
			errs = append(errs, fmt.Errorf("environment variable %s=%q: %w", name, value, err))
		}
	}
	return errors.Join(errs...)
}

// unknownEnv explains a VAULTASK_ variable that is neither a key nor
// reserved. Its value is left out: a misspelt secret's value is still secret.
func unknownEnv(name string) error {
	at := "environment variable " + name
	upper := strings.ToUpper(name)
	if _, isKey := fieldsByEnv[upper]; upper != name && (isKey || slices.Contains(reservedEnv, upper)) {
		return fmt.Errorf("%s: unknown; names are upper case: %s", at, upper)
	}
	sectionName, keyName, nested := strings.Cut(strings.TrimPrefix(name, EnvPrefix), envSeparator)
	section, key := strings.ToLower(sectionName), strings.ToLower(keyName)
	switch {
	case !nested:
		return fmt.Errorf("%s: unknown; want VAULTASK_<SECTION>__<KEY> or one of %s", at, strings.Join(reservedEnv, ", "))
	case !sections[section]:
		return fmt.Errorf("%s: unknown section %q", at, section)
	}
	return fmt.Errorf("%s: %w", at, unknownKey(section+"."+key))
}

// retiredKeys are keys an earlier version read, with what to do instead,
// so that a configuration written for it is told more than "unknown".
var retiredKeys = map[string]string{
	"web.thin_hits":     "coverage is judged by a model fitted for each embedding model now: delete the key (retrieval.coverage_thin moves the line to thin)",
	"web.thin_distance": "coverage is judged by a model fitted for each embedding model now: delete the key (retrieval.coverage_thin moves the line to thin)",
}

// unknownKey is the error for a key path that names no key.
func unknownKey(path string) error {
	if why, ok := retiredKeys[path]; ok {
		return fmt.Errorf("unknown key %q: retired: %s", path, why)
	}
	return fmt.Errorf("unknown key %q", path)
}

// setFromEnv parses a variable's text into the key.
func (f field) setFromEnv(c *Config, text string) error {
	v := f.value(c)
	switch {
	case f.typ == durationType:
		d, err := time.ParseDuration(text)
		if err != nil {
			return errors.New("not " + f.want())
		}
		v.SetInt(int64(d))
	case f.typ.Kind() == reflect.String:
		v.SetString(text)
	case f.typ.Kind() == reflect.Int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return errors.New("not " + f.want())
		}
		v.SetInt(int64(n))
	case f.typ.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return errors.New("not " + f.want())
		}
		v.SetFloat(x)
	case f.typ.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return errors.New("not " + f.want())
		}
		v.SetBool(b)
	case f.typ.Kind() == reflect.Slice:
		var list []string
		if err := json.Unmarshal([]byte(text), &list); err != nil || list == nil {
			return errors.New(`not a JSON array of strings, like ["a/**","b/**"]`)
		}
		v.Set(reflect.ValueOf(list))
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// Values returns the value of every key that is not a secret, by path
// ("retrieval.final_top_k"): a string, int, float64, bool, time.Duration or
// []string. /admin shows the running values of the keys it may change.
func (c Config) Values() map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if !f.secret() {
			out[f.path()] = f.value(&c).Interface()
		}
	}
	return out
}

// EnvKeys returns the keys that the VAULTASK_<SECTION>__<KEY> variables in
// env set, each path with the variable that sets it: an overrides file
// cannot change those, since the environment wins.
func EnvKeys(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if f, ok := fieldsByEnv[name]; ok {
			out[f.path()] = name
		}
	}
	return out
}
