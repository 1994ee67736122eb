package config

import (
	"strings"
	"testing"
)

// EnvName spells a key's variable as the README documents it, one per key,
// and the variable it spells for an unknown key parses back to that key in
// the error that refuses it.
func TestEnvName(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"retrieval.final_top_k": "VAULTASK_RETRIEVAL__FINAL_TOP_K",
		"api.admin_key":         "VAULTASK_API__ADMIN_KEY",
		"index.path":            "VAULTASK_INDEX__PATH",
		"nope.x":                "VAULTASK_NOPE__X",
	} {
		if got := EnvName(path); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", path, got, want)
		}
	}
	seen := map[string]string{}
	for _, f := range fields {
		name := EnvName(f.path())
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s both read %s", other, f.path(), name)
		}
		seen[name] = f.path()
	}
	_, err := Default().WithEnv([]string{EnvName("retrieval.no_such_key") + "=1"})
	if err == nil || !strings.Contains(err.Error(), `unknown key "retrieval.no_such_key"`) {
		t.Errorf("WithEnv(%s=1) = %v, want an error naming the key retrieval.no_such_key", EnvName("retrieval.no_such_key"), err)
	}
}
