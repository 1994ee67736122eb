package config

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's configuration reference from config.yaml")

// The markers around the README's configuration reference.
const (
	referenceBegin = "<!-- config-reference: made from config.yaml by `go test ./config -update-readme` -->\n"
	referenceEnd   = "<!-- end config-reference -->\n"
)

var (
	sectionLine = regexp.MustCompile(`^([a-z_]+):`)
	keyLine     = regexp.MustCompile(`^  ([a-z_0-9]+):\s*(.*?)\s*(?:#\s*(.*))?$`)
	secretLine  = regexp.MustCompile(`^  #\s*([a-z_]+):\s*env (VAULTASK_\S+) only\s*(.*)$`)
)

// reference is the configuration reference table: every key of config.yaml
// (the secrets too, from its comments) with its default, its environment
// variable and config.yaml's comment on it.
func reference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| key | default | environment variable | what it is |\n|---|---|---|---|\n")
	section := ""
	seen := map[string]bool{}
	for line := range strings.Lines(string(mustReadFile(t, "../config.yaml"))) {
		line = strings.TrimRight(line, "\n")
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		var path, def, env, what string
		if m := keyLine.FindStringSubmatch(line); m != nil && section != "" {
			path, def, what = section+"."+m[1], m[2], m[3]
			env = EnvName(path)
		} else if m := secretLine.FindStringSubmatch(line); m != nil && section != "" {
			path, def, env, what = section+"."+m[1], "secret: environment only", m[2], strings.Trim(m[3], "()")
		} else {
			continue
		}
		if _, ok := fieldsByPath[path]; !ok {
			t.Errorf("config.yaml has %s, which is not a key", path)
		}
		seen[path] = true
		if def != "secret: environment only" {
			def = "`" + strings.ReplaceAll(def, "|", `\|`) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", path, def, env, strings.ReplaceAll(what, "|", `\|`))
	}
	for _, f := range fields {
		if !seen[f.path()] {
			t.Errorf("config.yaml does not mention %s (a secret needs a comment: `# %s: env %s only`)", f.path(), f.key, EnvName(f.path()))
		}
	}
	return b.String()
}

// The README's configuration reference lists every key, made from
// config.yaml, so the two cannot drift apart.
func TestReadmeConfigReference(t *testing.T) {
	readme := mustReadFile(t, "../README.md")
	begin, end := bytes.Index(readme, []byte(referenceBegin)), bytes.Index(readme, []byte(referenceEnd))
	if begin < 0 || end < begin {
		t.Fatalf("README.md has no configuration reference between %q and %q", referenceBegin, referenceEnd)
	}
	want := reference(t)
	got := string(readme[begin+len(referenceBegin) : end])
	if got == want {
		return
	}
	if !*updateReadme {
		t.Fatalf("README.md's configuration reference differs from config.yaml: run go test ./config -update-readme\n--- README\n%s--- config.yaml\n%s", got, want)
	}
	out := append(append(append([]byte{}, readme[:begin+len(referenceBegin)]...), want...), readme[end:]...)
	if err := os.WriteFile("../README.md", out, 0o644); err != nil {
		t.Fatal(err)
	}
}
