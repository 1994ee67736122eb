package feed

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFolderFollower(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Home.md", "# Home\n")
	write("00 inbox/Draft.md", "not indexed\n")
	store := mustStore(t)
	f := NewFolderFollower(dir, testCorpus, store, quietLogger())
	f.Debounce = 20 * time.Millisecond
	if err := f.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(context.Background()); err != nil {
			t.Errorf("folder follower stopped with: %v", err)
		}
	})
	want := map[string]string{"Home.md": "# Home\n"}
	waitIndexed(t, store, want)

	write("Home.md", "# Home\n\nEdited.\n")
	write("Recipes/Bread.md", "# Bread\n") // in a new folder
	want["Home.md"], want["Recipes/Bread.md"] = "# Home\n\nEdited.\n", "# Bread\n"
	waitIndexed(t, store, want)
	write("Recipes/Cake.md", "# Cake\n") // the new folder is watched too
	want["Recipes/Cake.md"] = "# Cake\n"
	waitIndexed(t, store, want)

	if err := os.Remove(filepath.Join(dir, "Home.md")); err != nil {
		t.Fatal(err)
	}
	delete(want, "Home.md")
	waitIndexed(t, store, want)
	if diff := cmp.Diff(hashes(want), mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
