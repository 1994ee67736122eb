package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/transport/mcp"
)

// The MCP session key is made once, readable by its owner alone, and read
// back the same at the next start; a key file that is not one is an error
// naming it, never replaced by a new key.
func TestLoadSessionKey(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	path := sessionKeyPath(filepath.Join(dir, "vaultask.db"))
	key, err := loadSessionKey(path, quiet)
	if err != nil || len(key) != mcp.SessionKeyLen {
		t.Fatalf("first start: %d bytes, %v", len(key), err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v; want mode 0600", fi, err)
	}
	again, err := loadSessionKey(path, quiet)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second start: another key (%v)", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the index directory holds %d files, want the key alone (no temporary file left)", len(entries))
	}
	for _, bad := range []string{"", "not hex", strings.Repeat("ab", mcp.SessionKeyLen-1)} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadSessionKey(path, quiet); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("key file %q: %v, want an error naming the file", bad, err)
		}
		if text, _ := os.ReadFile(path); string(text) != bad {
			t.Errorf("key file %q was replaced by %q", bad, text)
		}
	}
}
