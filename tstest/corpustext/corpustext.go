package corpustext

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Doc is one document of a dump: a note (its path and its chunks' ids) or
// a chunk (its data).
type Doc struct {
	Path     string   `json:"path"`
	Data     any      `json:"data"`
	Children []string `json:"children"`
	// Deleted marks a note LiveSync soft-deleted.
	Deleted bool `json:"deleted"`
}

// The variables the corpus tests read; config reserves both
// (config.EnvRequireCorpus, config.EnvCorpusDir), so that vaultask started
// by a test with them set does not take them for configuration keys.
const (
	// EnvRequire=1 makes Require fail a test instead of skipping it when
	// the corpus is missing (scripts/test.sh sets it).
	EnvRequire = "VAULTASK_REQUIRE_CORPUS"
	// EnvDir names the directory of the dumps instead of Dir's default.
	EnvDir = "VAULTASK_CORPUS_DIR"
)

// Require returns the directory of the corpus dumps (Dir) for a test that
// reads them. Without the dumps (no MANIFEST.md there) it skips tb, naming
// the directory, unless VAULTASK_REQUIRE_CORPUS=1, where it fails tb.
func Require(tb testing.TB) string {
	tb.Helper()
	dir, ok := Find(tb)
	if !ok {
		tb.Skipf("the LiveSync corpus is not at %s (set %s)", dir, EnvDir)
	}
	return dir
}

// Find is Require for a test that runs without the corpus too, on less:
// it reports whether the dumps are at dir, and fails tb when they are not
// and VAULTASK_REQUIRE_CORPUS=1. Every test that reads the corpus finds
// it through Require or Find.
func Find(tb testing.TB) (dir string, ok bool) {
	tb.Helper()
	dir = Dir()
	_, err := os.Stat(filepath.Join(dir, "MANIFEST.md"))
	if err != nil && os.Getenv(EnvRequire) == "1" {
		tb.Fatalf("the LiveSync corpus is not at %s (set %s) and %s=1: %v", dir, EnvDir, EnvRequire, err)
	}
	return dir, err == nil
}

// Dir is where the corpus dumps are: VAULTASK_CORPUS_DIR, else
// ../shared/corpus beside the module root above the working directory (a
// test's package directory), where the project's machines keep them.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "corpus")
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "corpus")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared", "corpus")
		}
		dir = parent
	}
}

// Read returns the documents of a gzipped _all_docs dump (with
// include_docs), by id.
func Read(file string) (map[string]Doc, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var dump struct {
		Rows []struct {
			ID  string `json:"id"`
			Doc Doc    `json:"doc"`
		} `json:"rows"`
	}
	if err := json.NewDecoder(zr).Decode(&dump); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	docs := make(map[string]Doc, len(dump.Rows))
	for _, r := range dump.Rows {
		docs[r.ID] = r.Doc
	}
	return docs, nil
}

// ErrUnknownKind is Text's error for a kind it does not know.
var ErrUnknownKind = errors.New("unknown kind of corpus text")

// Text is the text a golden file names: kind "chunk" a chunk's data,
// "title" a note's file name without .md, "note" a whole note (its chunks
// joined).
func Text(docs map[string]Doc, kind, id string) (string, error) {
	d, ok := docs[id]
	if !ok {
		return "", fmt.Errorf("the corpus has no document %s", id)
	}
	switch kind {
	case "chunk":
		s, _ := d.Data.(string)
		return s, nil
	case "title":
		return strings.TrimSuffix(path.Base(d.Path), ".md"), nil
	case "note":
		var b strings.Builder
		for _, c := range d.Children {
			s, _ := docs[c].Data.(string)
			b.WriteString(s)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownKind, kind)
}
