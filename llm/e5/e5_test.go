package e5

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/deptest"
	"github.com/vaultask/vaultask/tstest/inplace"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/simd", "internal/modelfetch", "internal/modelfile", "llm/builtin", "llm/internal/bert")
}

// modelDir is where the tests look for the model: its folder in the
// built-in models' directory VAULTASK_MODELS__BUILTIN_DIR names (where
// `vaultask fetch-model` puts it), else in the default one.
func modelDir() string {
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		return filepath.Join(d, Spec.Dir)
	}
	return filepath.Join(builtin.DefaultDir(), Spec.Dir)
}

var loadShared = sync.OnceValues(func() (*builtin.Encoder, error) { return load(&Spec, modelDir(), builtin.Options{}) })

// mustModel returns the model shared by the tests. Without the model file
// it skips, naming the command that fetches it, unless
// VAULTASK_REQUIRE_MODELS=1 (scripts/test.sh sets it), where it fails.
func mustModel(tb testing.TB) *builtin.Encoder {
	tb.Helper()
	m, err := loadShared()
	if errors.Is(err, builtin.ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		tb.Skipf("%v; vaultask fetch-model e5 fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// pinning is the model's spec with the sum of the model file in dir, as
// it is, in place of the pinned one: a test loads a file of its own
// through the real path.
func pinning(t *testing.T, dir string) *builtin.Spec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fileName))
	if err != nil {
		t.Fatal(err)
	}
	head := "SHA256 (" + fileName + ") = "
	i := strings.Index(checksums, head) + len(head)
	s := Spec
	s.Sums = modelfile.MustParse(checksums[:i] + fmt.Sprintf("%x", sha256.Sum256(b)) + checksums[i+64:])
	return &s
}

// TestLoadDamaged: a model file with bytes overwritten that still parses
// is refused, naming the file and the command that fetches it again;
// before the sum was checked it loaded and embedded wrong.
func TestLoadDamaged(t *testing.T) {
	mustModel(t)
	b, err := os.ReadFile(filepath.Join(modelDir(), fileName))
	if err != nil {
		t.Fatal(err)
	}
	// Bytes in the middle of the file, in the 4-bit weights.
	for i := len(b) / 2; i < len(b)/2+4096; i++ {
		b[i] ^= 0x11
	}
	builtinDir := t.TempDir()
	dir := filepath.Join(builtinDir, Spec.Dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fileName)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Spec.Load(dir, builtin.Options{})
	if !errors.Is(err, modelfile.ErrMismatch) || !strings.Contains(err.Error(), path+" does not match its pinned sum") || !strings.Contains(err.Error(), "run vaultask fetch-model --dir "+builtinDir+" e5 to fetch it again") {
		t.Errorf("Load of a damaged file = %v, want ErrMismatch naming it and the fetch", err)
	}
	// The file parses: the sum is what refuses it.
	m, err := load(pinning(t, dir), dir, builtin.Options{})
	if err != nil {
		t.Fatalf("the damaged file does not parse (%v): the test proves nothing of the sum", err)
	}
	m.Close()
}

// TestFileRewrittenUnderTheModel: the model file cut short under a loaded
// model, then copied over in place as cp does. The word table stayed
// mapped, so the next Embed read past the end of the file and the process
// died (SIGBUS); now the calls fail, on the model and its background view,
// naming the fetch, and embed as before once the file is the pinned one
// again.
func TestFileRewrittenUnderTheModel(t *testing.T) {
	mustModel(t)
	dir := t.TempDir()
	path := filepath.Join(dir, fileName)
	inplace.Copy(t, filepath.Join(modelDir(), fileName), path)
	m, err := load(&Spec, dir, builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	bg := m.Background()
	defer bg.Close()
	ctx := context.Background()
	texts := []string{"query: how do I sync my vault between two phones?", "passage: CouchDB keeps the chunks."}
	want, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, model := range []builtin.Model{m, bg} {
		if _, err := model.Embed(ctx, texts); !errors.Is(err, modelfile.ErrChanged) || !strings.Contains(err.Error(), "run vaultask fetch-model --dir "+dir+" e5") {
			t.Errorf("Embed with the model file cut short = %v, want ErrChanged naming the fetch", err)
		}
	}
	inplace.Copy(t, filepath.Join(modelDir(), fileName), path)
	for _, model := range []builtin.Model{m, bg} {
		got, err := model.Embed(ctx, texts)
		if err != nil {
			t.Fatalf("Embed once the file is copied back: %v", err)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("text %d embeds otherwise once the file is copied back", i)
			}
		}
	}
}
