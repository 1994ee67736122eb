package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/vaultask/vaultask/internal/atomicfile"
	"github.com/vaultask/vaultask/transport/mcp"
)

// sessionKeyPath is where serve keeps the key that signs MCP session ids:
// beside the index, so that it lives (and is backed up, and is lost) with
// it, and a restart keeps every session good.
func sessionKeyPath(indexPath string) string {
	return indexPath + ".mcp-session-key"
}

// loadSessionKey reads the MCP session key at path, making one when there
// is none (the first start, or the file was deleted). A new key fails
// closed: a session id signed with the old one no longer verifies, and its
// session sees open notes only until its client connects again; it never
// sees more. A key file that cannot be read is an error naming it, not a
// new key made over it.
func loadSessionKey(path string, log *slog.Logger) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(text)))
		if err != nil || len(key) != mcp.SessionKeyLen {
			return nil, fmt.Errorf("the MCP session key %s is malformed (want %d hex digits): delete it and serve makes a new one (MCP sessions opened before then see open notes only until their clients reconnect)", path, 2*mcp.SessionKeyLen)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the MCP session key: %w", err)
	}
	key := make([]byte, mcp.SessionKeyLen)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	if err := atomicfile.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("save a new MCP session key beside the index: %w", err)
	}
	log.Info("made a new MCP session key: MCP sessions opened under another key, if any, see open notes only until their clients reconnect", keyFile, path)
	return key, nil
}
