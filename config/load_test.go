package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// layers are the inputs of one Load: the config.yaml and overrides file
// contents ("" writes no file) and the environment.
type layers struct {
	yaml      string
	overrides string
	env       []string
}

// load writes the layers' files into a temp dir and loads them. It returns
// a replacer that turns {config} and {overrides} into the files' paths, for
// expected error messages.
func (l layers) load(tb testing.TB) (Config, *strings.Replacer, error) {
	tb.Helper()
	dir := tb.TempDir()
	configPath := filepath.Join(dir, "config.yaml")
	overridesPath := filepath.Join(dir, "overrides.json")
	path := ""
	if l.yaml != "" {
		mustWriteFile(tb, configPath, l.yaml)
		path = configPath
	}
	if l.overrides != "" {
		mustWriteFile(tb, overridesPath, l.overrides)
	}
	env := append([]string{EnvOverridesFile + "=" + overridesPath}, l.env...)
	c, err := Load(path, env)
	return c, strings.NewReplacer("{config}", configPath, "{overrides}", overridesPath), err
}

func mustWriteFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name   string
		layers layers
		want   func(c *Config) // applied to Default()
	}{
		{
			name: "no files, no environment",
			want: func(c *Config) {},
		},
		{
			name:   "the tests' switches and corpus directory are not keys",
			layers: layers{env: []string{"VAULTASK_REQUIRE_MODELS=1", "VAULTASK_REQUIRE_CORPUS=1", "VAULTASK_CORPUS_DIR=/x/corpus"}},
			want:   func(c *Config) {},
		},
		{
			name:   "env int",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=10"}},
			want:   func(c *Config) { c.Retrieval.FinalTopK = 10 },
		},
		{
			name:   "env bool",
			layers: layers{env: []string{"VAULTASK_WEB__ENABLED=true", "VAULTASK_RETRIEVAL__GRAPH_ENABLED=0"}},
			want:   func(c *Config) { c.Web.Enabled, c.Retrieval.GraphEnabled = true, false },
		},
		{
			name:   "env float",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__GRAPH_DISCOUNT=0.5"}},
			want:   func(c *Config) { c.Retrieval.GraphDiscount = 0.5 },
		},
		{
			name:   "env duration",
			layers: layers{env: []string{"VAULTASK_INDEX__RECONCILE_INTERVAL=90m"}},
			want:   func(c *Config) { c.Index.ReconcileInterval = 90 * time.Minute },
		},
		{
			name:   "env string list as JSON",
			layers: layers{env: []string{`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Tastings/**","30 projects/**"]`}},
			want:   func(c *Config) { c.Sensitivity.PersonalPaths = []string{"Tastings/**", "30 projects/**"} },
		},
		{
			name:   "env empty list",
			layers: layers{env: []string{"VAULTASK_CORPUS__EXCLUDE=[]"}},
			want:   func(c *Config) { c.Corpus.Exclude = []string{} },
		},
		{
			name:   "env strings",
			layers: layers{env: []string{"VAULTASK_LOG__LEVEL=debug", "VAULTASK_VAULT__DATABASE=notes", "VAULTASK_MODELS__GENERATION=ollama/llama3.2:3b=q4"}},
			want: func(c *Config) {
				c.Log.Level, c.Vault.Database, c.Models.Generation = "debug", "notes", "ollama/llama3.2:3b=q4"
			},
		},
		{
			name: "env secrets",
			layers: layers{env: []string{
				"VAULTASK_VAULT__PASSWORD=pw", "VAULTASK_VAULT__PASSPHRASE=pp", "VAULTASK_API__ADMIN_KEY=ak",
			}},
			want: func(c *Config) { c.Vault.Password, c.Vault.Passphrase, c.API.AdminKey = "pw", "pp", "ak" },
		},
		{
			name: "reserved and foreign variables are ignored",
			layers: layers{env: []string{
				"VAULTASK_CONFIG=/etc/vaultask.yaml", "VAULTASK_OPENROUTER_API_KEY=k", "VAULTASK_OPENAI_API_KEY=k",
				"VAULTASK_OLLAMA_API_KEY=k", "VAULTASK_TAVILY_API_KEY=k", "VAULTASK_BRAVE_API_KEY=k", "HOME=/root", "VAULTASK_NO_EQUALS_SIGN",
			}},
			want: func(c *Config) {},
		},
		{
			name:   "later env entry wins",
			layers: layers{env: []string{"VAULTASK_LOG__LEVEL=debug", "VAULTASK_LOG__LEVEL=warn"}},
			want:   func(c *Config) { c.Log.Level = "warn" },
		},
		{
			name:   "yaml only",
			layers: layers{yaml: "retrieval:\n  final_top_k: 5\n"},
			want:   func(c *Config) { c.Retrieval.FinalTopK = 5 },
		},
		{
			name: "overrides beat yaml",
			layers: layers{
				yaml:      "retrieval:\n  final_top_k: 5\n",
				overrides: `{"retrieval":{"final_top_k":6}}`,
			},
			want: func(c *Config) { c.Retrieval.FinalTopK = 6 },
		},
		{
			name: "env beats overrides and yaml",
			layers: layers{
				yaml:      "retrieval:\n  final_top_k: 5\n",
				overrides: `{"retrieval":{"final_top_k":6}}`,
				env:       []string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=7"},
			},
			want: func(c *Config) { c.Retrieval.FinalTopK = 7 },
		},
		{
			name: "layers combine key by key",
			layers: layers{
				yaml:      "log:\n  level: debug\nretrieval:\n  final_top_k: 5\n",
				overrides: `{"web":{"enabled":true},"retrieval":{"rerank_top_k":25}}`,
				env:       []string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=7"},
			},
			want: func(c *Config) {
				c.Log.Level, c.Web.Enabled, c.Retrieval.RerankTopK, c.Retrieval.FinalTopK = "debug", true, 25, 7
			},
		},
		{
			name:   "a later layer completes an earlier one before validation",
			layers: layers{yaml: "vault:\n  source: folder\n", env: []string{"VAULTASK_VAULT__PATH=/vault"}},
			want:   func(c *Config) { c.Vault.Source, c.Vault.Path = "folder", "/vault" },
		},
		{
			name: "yaml types, nulls and aliases",
			layers: layers{yaml: "" +
				"index:\n  reconcile_interval: 90m\n" +
				"vault:\n  user:\n" +
				"sensitivity:\n  personal_paths: &personal\n    - Tastings/**\n" +
				"corpus:\n  exclude: *personal\n" +
				"retrieval:\n  graph_discount: 1\n" +
				"web:\n",
			},
			want: func(c *Config) {
				c.Index.ReconcileInterval = 90 * time.Minute
				c.Sensitivity.PersonalPaths = []string{"Tastings/**"}
				c.Corpus.Exclude = []string{"Tastings/**"}
				c.Retrieval.GraphDiscount = 1
			},
		},
		{
			name: "overrides types",
			layers: layers{overrides: `{
	"index": {"reconcile_interval": "2h"},
	"sensitivity": {"personal_paths": ["Journal\/**"], "frontmatter_key": "private"},
	"retrieval": {"graph_discount": 0.5, "graph_enabled": false},
	"models": {"rerank": null}
}`},
			want: func(c *Config) {
				c.Index.ReconcileInterval = 2 * time.Hour
				c.Sensitivity.PersonalPaths, c.Sensitivity.FrontmatterKey = []string{"Journal/**"}, "private"
				c.Retrieval.GraphDiscount, c.Retrieval.GraphEnabled = 0.5, false
			},
		},
		{
			name:   "empty overrides file",
			layers: layers{overrides: " \n"},
			want:   func(c *Config) {},
		},
		{
			name:   "empty overrides object",
			layers: layers{overrides: `{}`},
			want:   func(c *Config) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := tt.layers.load(t)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := Default()
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		layers  layers
		want    []string // substrings of the error, after {config} and {overrides} are replaced
		notWant []string
	}{
		{
			name:   "yaml unknown key",
			layers: layers{yaml: "retrieval:\n  final_topk: 6\n"},
			want:   []string{`{config}:2: unknown key "retrieval.final_topk"`},
		},
		{
			name:   "yaml unknown section",
			layers: layers{yaml: "log:\n  level: info\nretreival:\n  final_top_k: 6\n"},
			want:   []string{`{config}:3: unknown section "retreival"`},
		},
		{
			name:   "overrides unknown key",
			layers: layers{overrides: "{\n  \"retrieval\": {\n    \"final_topk\": 6\n  }\n}"},
			want:   []string{`{overrides}:3: unknown key "retrieval.final_topk"`},
		},
		{
			name:   "overrides unknown section",
			layers: layers{overrides: `{"retreival":{}}`},
			want:   []string{`{overrides}:1: unknown section "retreival"`},
		},
		{
			name:   "env unknown key",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__FINAL_TOPK=6"}},
			want:   []string{`environment variable VAULTASK_RETRIEVAL__FINAL_TOPK: unknown key "retrieval.final_topk"`},
		},
		{
			name:   "env unknown section",
			layers: layers{env: []string{"VAULTASK_RETREIVAL__FINAL_TOP_K=6"}},
			want:   []string{`environment variable VAULTASK_RETREIVAL__FINAL_TOP_K: unknown section "retreival"`},
		},
		{
			name:   "env too deep",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__FINAL__TOP_K=6"}},
			want:   []string{`environment variable VAULTASK_RETRIEVAL__FINAL__TOP_K: unknown key "retrieval.final__top_k"`},
		},
		{
			name:    "env unknown variable without separator, value not shown",
			layers:  layers{env: []string{"VAULTASK_ADMIN_KEY=hunter2"}},
			want:    []string{"environment variable VAULTASK_ADMIN_KEY: unknown; want VAULTASK_<SECTION>__<KEY> or one of VAULTASK_CONFIG"},
			notWant: []string{"hunter2"},
		},
		{
			name:    "env misspelt secret, value not shown",
			layers:  layers{env: []string{"VAULTASK_VAULT__PASWORD=hunter2"}},
			want:    []string{`environment variable VAULTASK_VAULT__PASWORD: unknown key "vault.pasword"`},
			notWant: []string{"hunter2"},
		},
		{
			name:   "env lower case",
			layers: layers{env: []string{"VAULTASK_LOG__level=debug", "VAULTASK_Config=/x"}},
			want: []string{
				"environment variable VAULTASK_LOG__level: unknown; names are upper case: VAULTASK_LOG__LEVEL",
				"environment variable VAULTASK_Config: unknown; names are upper case: VAULTASK_CONFIG",
			},
		},
		{
			name:   "env not an integer",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=x"}},
			want:   []string{`environment variable VAULTASK_RETRIEVAL__FINAL_TOP_K="x": not an integer`},
		},
		{
			name:   "env not a boolean",
			layers: layers{env: []string{"VAULTASK_WEB__ENABLED=yes"}},
			want:   []string{`environment variable VAULTASK_WEB__ENABLED="yes": not a boolean`},
		},
		{
			name:   "env not a number",
			layers: layers{env: []string{"VAULTASK_RETRIEVAL__FTS_WEIGHT=far"}},
			want:   []string{`environment variable VAULTASK_RETRIEVAL__FTS_WEIGHT="far": not a number`},
		},
		{
			name:   "env duration without unit",
			layers: layers{env: []string{"VAULTASK_INDEX__RECONCILE_INTERVAL=90"}},
			want:   []string{`environment variable VAULTASK_INDEX__RECONCILE_INTERVAL="90": not a duration like 90m`},
		},
		{
			name:   "env list not JSON",
			layers: layers{env: []string{"VAULTASK_SENSITIVITY__PERSONAL_PATHS=Tastings/**"}},
			want:   []string{`environment variable VAULTASK_SENSITIVITY__PERSONAL_PATHS="Tastings/**": not a JSON array of strings`},
		},
		{
			name:   "env list of numbers",
			layers: layers{env: []string{"VAULTASK_CORPUS__INCLUDE=[1]"}},
			want:   []string{`environment variable VAULTASK_CORPUS__INCLUDE="[1]": not a JSON array of strings`},
		},
		{
			name:   "env list null",
			layers: layers{env: []string{"VAULTASK_CORPUS__INCLUDE=null"}},
			want:   []string{`environment variable VAULTASK_CORPUS__INCLUDE="null": not a JSON array of strings`},
		},
		{
			name:   "yaml quoted integer",
			layers: layers{yaml: "retrieval:\n  final_top_k: \"8\"\n"},
			want:   []string{`{config}:2: retrieval.final_top_k="8": not an integer`},
		},
		{
			name:   "yaml yes is not a boolean",
			layers: layers{yaml: "web:\n  enabled: yes\n"},
			want:   []string{`{config}:2: web.enabled="yes": not a boolean`},
		},
		{
			name:   "yaml duration as a number",
			layers: layers{yaml: "index:\n  reconcile_interval: 3600\n"},
			want:   []string{`{config}:2: index.reconcile_interval="3600": not a duration`},
		},
		{
			name:   "yaml bad duration",
			layers: layers{yaml: "index:\n  reconcile_interval: hourly\n"},
			want:   []string{`{config}:2: index.reconcile_interval="hourly": not a duration`},
		},
		{
			name:   "yaml list as a string",
			layers: layers{yaml: "corpus:\n  include: \"**/*.md\"\n"},
			want:   []string{`{config}:2: corpus.include="**/*.md": not a list of strings`},
		},
		{
			name:   "yaml null integer",
			layers: layers{yaml: "retrieval:\n  final_top_k:\n"},
			want:   []string{`{config}:2: retrieval.final_top_k="": not an integer`},
		},
		{
			name:   "yaml section not a mapping",
			layers: layers{yaml: "retrieval: 5\n"},
			want:   []string{`{config}:1: section "retrieval": got "5", want a mapping of keys`},
		},
		{
			name:   "yaml top level not a mapping",
			layers: layers{yaml: "- retrieval\n"},
			want:   []string{`{config}:1: got a list, want a mapping of sections`},
		},
		{
			name:   "yaml repeated key",
			layers: layers{yaml: "retrieval:\n  final_top_k: 5\n  final_top_k: 6\n"},
			want:   []string{`{config}:3: key "retrieval.final_top_k" repeated (first at line 2)`},
		},
		{
			name:   "yaml repeated section",
			layers: layers{yaml: "log:\n  level: info\nlog:\n  format: json\n"},
			want:   []string{`{config}:3: section "log" repeated (first at line 1)`},
		},
		{
			name:   "yaml merge key is unknown",
			layers: layers{yaml: "log:\n  <<: {level: debug}\n"},
			want:   []string{`{config}:2: unknown key "log.<<"`},
		},
		{
			name:   "yaml second document",
			layers: layers{yaml: "log:\n  level: info\n---\nlog:\n  level: debug\n"},
			want:   []string{`{config}:3: a second YAML document`},
		},
		{
			name:   "yaml syntax error",
			layers: layers{yaml: "retrieval: [\n"},
			want:   []string{`{config}: yaml:`},
		},
		{
			name:   "overrides quoted integer",
			layers: layers{overrides: `{"retrieval":{"final_top_k":"6"}}`},
			want:   []string{`{overrides}:1: retrieval.final_top_k="6": not an integer`},
		},
		{
			name:   "overrides fractional integer",
			layers: layers{overrides: `{"retrieval":{"final_top_k":6.5}}`},
			want:   []string{`{overrides}:1: retrieval.final_top_k="6.5": not an integer`},
		},
		{
			name:   "overrides repeated key",
			layers: layers{overrides: `{"log":{"level":"debug","level":"warn"}}`},
			want:   []string{`{overrides}:1: key "log.level" repeated`},
		},
		{
			name:   "overrides malformed",
			layers: layers{overrides: "{\n\"retrieval\": {\"final_top_k\": 6,}}"},
			want:   []string{`{overrides}:2: not valid JSON: invalid character '}'`},
		},
		{
			name:   "overrides truncated",
			layers: layers{overrides: `{"retrieval":`},
			want:   []string{`{overrides}: not valid JSON`},
		},
		{
			name:   "overrides in YAML syntax",
			layers: layers{overrides: "retrieval:\n  final_top_k: 6\n"},
			want:   []string{`{overrides}:1: not valid JSON`},
		},
		{
			name:   "overrides trailing data",
			layers: layers{overrides: `{} {}`},
			want:   []string{`{overrides}:1: not valid JSON: data after the top-level value`},
		},
		{
			name:   "overrides not an object",
			layers: layers{overrides: `[1]`},
			want:   []string{`{overrides}:1: got a list, want a mapping of sections`},
		},
		{
			name:    "yaml secret",
			layers:  layers{yaml: "vault:\n  password: hunter2\n  passphrase: hunter3\n"},
			want:    []string{"{config}:2: vault.password is a secret, and secrets are read only from the environment: set VAULTASK_VAULT__PASSWORD instead", "{config}:3: vault.passphrase is a secret", "VAULTASK_VAULT__PASSPHRASE"},
			notWant: []string{"hunter2", "hunter3"},
		},
		{
			name:    "overrides secret",
			layers:  layers{overrides: `{"api":{"admin_key":"hunter2"}}`},
			want:    []string{"{overrides}:1: api.admin_key is a secret, and secrets are read only from the environment: set VAULTASK_API__ADMIN_KEY instead"},
			notWant: []string{"hunter2"},
		},
		{
			name: "errors of every layer are collected",
			layers: layers{
				yaml:      "retrieval:\n  final_topk: 6\n  vector_topk: 6\n",
				overrides: `{"web":{"enable":true}}`,
				env:       []string{"VAULTASK_LOG__LEVL=debug"},
			},
			want: []string{`unknown key "retrieval.final_topk"`, `unknown key "retrieval.vector_topk"`, `unknown key "web.enable"`, `unknown key "log.levl"`},
		},
		{
			name:   "the merged result is validated",
			layers: layers{yaml: "retrieval:\n  rerank_top_k: 10\n", env: []string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=12"}},
			want:   []string{"retrieval.rerank_top_k (10) must be >= retrieval.final_top_k (12)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, paths, err := tt.layers.load(t)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, want := range tt.want {
				if want := paths.Replace(want); !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
			for _, notWant := range tt.notWant {
				if strings.Contains(err.Error(), notWant) {
					t.Errorf("error contains %q:\n%v", notWant, err)
				}
			}
		})
	}
}

func TestLoadMissingConfigFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "config.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "read config") {
		t.Fatalf("Load of a missing config.yaml: err = %v, want a read config error", err)
	}
}

func TestLoadUnreadableOverrides(t *testing.T) {
	// A directory where the file should be: present but unreadable, which
	// unlike a missing file is an error.
	dir := t.TempDir()
	_, err := Load("", []string{EnvOverridesFile + "=" + dir})
	if err == nil || !strings.Contains(err.Error(), "read overrides") {
		t.Fatalf("Load: err = %v, want a read overrides error", err)
	}
}

func TestOverridesFile(t *testing.T) {
	tests := []struct {
		env  []string
		want string
	}{
		{nil, DefaultOverridesFile},
		{[]string{EnvOverridesFile + "="}, DefaultOverridesFile},
		{[]string{EnvOverridesFile + "=/srv/o.json"}, "/srv/o.json"},
	}
	for _, tt := range tests {
		if got := OverridesFile(tt.env); got != tt.want {
			t.Errorf("OverridesFile(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestWithOverridesProposal is the admin console's check of a document
// before it saves it: the base config is left untouched.
func TestWithOverridesProposal(t *testing.T) {
	base := Default()
	proposed, err := base.WithOverrides([]byte(`{"corpus":{"include":["Notes/**"]},"retrieval":{"final_top_k":6}}`), "proposed overrides")
	if err != nil {
		t.Fatal(err)
	}
	proposed, err = proposed.WithEnv([]string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := proposed.Validate(); err != nil {
		t.Fatal(err)
	}
	if proposed.Corpus.Include[0] != "Notes/**" || proposed.Retrieval.FinalTopK != 9 {
		t.Errorf("proposed = %v %d, want [Notes/**] 9", proposed.Corpus.Include, proposed.Retrieval.FinalTopK)
	}
	if diff := cmp.Diff(Default(), base); diff != "" {
		t.Errorf("WithOverrides changed its receiver (-want +got):\n%s", diff)
	}

	_, err = base.WithOverrides([]byte(`{"retrieval":{"final_top_k":0}, "vault":{"password":"x"}}`), "proposed overrides")
	if err == nil || !strings.Contains(err.Error(), "proposed overrides:1: vault.password is a secret") {
		t.Errorf("WithOverrides with a secret: err = %v", err)
	}
}

// Set parses a key's text as its environment variable would, with the same
// error after the variable's name, for every key but the secrets.
func TestSetMatchesEnv(t *testing.T) {
	texts := []string{"2", "0.5", "true", "90m", `["a/**"]`, "plain", "x"}
	for _, f := range fields {
		for _, text := range texts {
			viaSet := Default()
			setErr := viaSet.Set(f.path(), text)
			if f.secret() {
				if setErr == nil || !strings.Contains(setErr.Error(), f.path()+" is a secret") || !strings.Contains(setErr.Error(), EnvName(f.path())) {
					t.Errorf("Set(%s) of a secret: %v, want a refusal naming %s", f.path(), setErr, EnvName(f.path()))
				}
				if viaSet.String() != Default().String() {
					t.Errorf("Set(%s) of a secret changed the config", f.path())
				}
				continue
			}
			viaEnv, envErr := Default().WithEnv([]string{EnvName(f.path()) + "=" + text})
			switch {
			case (setErr == nil) != (envErr == nil):
				t.Errorf("%s=%q: Set error %v, env error %v", f.path(), text, setErr, envErr)
			case setErr != nil:
				want := strings.Replace(envErr.Error(), "environment variable "+EnvName(f.path()), f.path(), 1)
				if setErr.Error() != want {
					t.Errorf("%s=%q: Set error %q, want %q", f.path(), text, setErr, want)
				}
			default:
				if diff := cmp.Diff(viaEnv, viaSet); diff != "" {
					t.Errorf("%s=%q: Set and the environment differ (-env +Set):\n%s", f.path(), text, diff)
				}
			}
		}
	}
	c := Default()
	for path, want := range map[string]string{
		"retrieval.fts_wieght": `unknown key "retrieval.fts_wieght"`,
		"retreival.fts_weight": `unknown section "retreival"`,
		"fts_weight":           `unknown section "fts_weight"`,
	} {
		if err := c.Set(path, "2"); err == nil || err.Error() != want {
			t.Errorf("Set(%q): %v, want %s", path, err, want)
		}
	}
	if err := c.Set("retrieval.fts_weight", "2"); err != nil || c.Retrieval.FTSWeight != 2 {
		t.Errorf("Set(retrieval.fts_weight, 2): %v, weight %v", err, c.Retrieval.FTSWeight)
	}
}

// Values holds every key but the secrets, as the config holds it; EnvKeys
// names the keys the environment sets.
func TestValuesAndEnvKeys(t *testing.T) {
	c, err := Default().WithEnv([]string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=6", "VAULTASK_API__ADMIN_KEY=s3cret", "VAULTASK_API__OBSIDIAN_VAULT=Notes"})
	if err != nil {
		t.Fatal(err)
	}
	v := c.Values()
	if v["retrieval.final_top_k"] != 6 || v["retrieval.fts_weight"] != Default().Retrieval.FTSWeight || v["web.enabled"] != false || v["api.obsidian_vault"] != "Notes" || v["index.reconcile_interval"] != time.Hour {
		t.Errorf("Values = %v", v)
	}
	for _, f := range fields {
		if _, ok := v[f.path()]; ok == f.secret() {
			t.Errorf("Values has %s: %v; a secret: %v", f.path(), ok, f.secret())
		}
	}
	got := EnvKeys([]string{"VAULTASK_RETRIEVAL__FINAL_TOP_K=6", "VAULTASK_CONFIG=x.yaml", "HOME=/root", "VAULTASK_RETRIEVAL__FINAL_TOP_K=7", "VAULTASK_WEB__ENABLED=true", "VAULTASK_NOPE__X=1"})
	if diff := cmp.Diff(map[string]string{"retrieval.final_top_k": "VAULTASK_RETRIEVAL__FINAL_TOP_K", "web.enabled": "VAULTASK_WEB__ENABLED"}, got); diff != "" {
		t.Errorf("EnvKeys (-want +got):\n%s", diff)
	}
}
