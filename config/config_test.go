package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestConfigYAMLIsDefault keeps the committed config.yaml from drifting away
// from Default(): same values, and every key written out.
func TestConfigYAMLIsDefault(t *testing.T) {
	// A missing overrides file, so that one on this machine can't interfere.
	env := []string{EnvOverridesFile + "=" + filepath.Join(t.TempDir(), "overrides.json")}
	got, err := Load("../config.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), got); diff != "" {
		t.Errorf("../config.yaml differs from Default() (-want +got):\n%s", diff)
	}

	var doc struct {
		Sections map[string]map[string]any `yaml:",inline"`
	}
	data := mustReadFile(t, "../config.yaml")
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		_, written := doc.Sections[f.section][f.key]
		if !f.secret() && !written {
			t.Errorf("../config.yaml lacks %s", f.path())
		}
	}
}

func TestFieldNames(t *testing.T) {
	if len(fieldsByPath) != len(fields) || len(fieldsByEnv) != len(fields) {
		t.Errorf("%d fields but %d paths and %d variable names: names collide", len(fields), len(fieldsByPath), len(fieldsByEnv))
	}
	for _, f := range fields {
		if f.key == "" || f.section == "" || strings.Contains(f.key, envSeparator) {
			t.Errorf("field %v: want a yaml name without %q", f.index, envSeparator)
		}
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	c, err := Default().WithEnv([]string{
		"VAULTASK_VAULT__PASSWORD=hunter2-password",
		"VAULTASK_VAULT__PASSPHRASE=hunter2-passphrase",
		"VAULTASK_API__ADMIN_KEY=hunter2-admin",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Vault.Password.Reveal() != "hunter2-password" {
		t.Fatalf("Reveal = %q", c.Vault.Password.Reveal())
	}

	var text, jsonLog bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("config", "config", c)
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("config", "config", c, "vault", c.Vault)
	marshalledJSON, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	marshalledYAML, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"String":        c.String(),
		"%v":            fmt.Sprintf("%v", c),
		"%+v":           fmt.Sprintf("%+v", c),
		"%#v":           fmt.Sprintf("%#v", c),
		"%v vault":      fmt.Sprintf("%v", c.Vault),
		"%+v vault":     fmt.Sprintf("%+v", c.Vault),
		"%#v vault":     fmt.Sprintf("%#v", c.Vault),
		"Sprint secret": fmt.Sprint(c.API.AdminKey),
		"%q secret":     fmt.Sprintf("%q", c.API.AdminKey),
		"slog text":     text.String(),
		"slog json":     jsonLog.String(),
		"json":          string(marshalledJSON),
		"yaml":          string(marshalledYAML),
	}
	for name, out := range outputs {
		if strings.Contains(out, "hunter2") {
			t.Errorf("%s output leaks a secret:\n%s", name, out)
		}
		if !strings.Contains(out, redacted) {
			t.Errorf("%s output lacks %s:\n%s", name, redacted, out)
		}
	}
	if !strings.Contains(text.String(), "config.vault.password=[redacted]") {
		t.Errorf("slog text output lacks config.vault.password=[redacted]:\n%s", text.String())
	}
}

func TestString(t *testing.T) {
	got := Default().String()
	for _, want := range []string{
		`vault.source: "couchdb"`,
		`vault.password: ""`,
		`corpus.exclude: ["00 inbox/**","**/.trash/**"]`,
		"index.reconcile_interval: 1h0m0s",
		"retrieval.graph_discount: 0.7",
		"retrieval.final_top_k: 8",
		"web.enabled: false",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("String() lacks %q:\n%s", want, got)
		}
	}
	if lines := strings.Count(got, "\n"); lines != len(fields) {
		t.Errorf("String() has %d lines, want one per key (%d)", lines, len(fields))
	}
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
