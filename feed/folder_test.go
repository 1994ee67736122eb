package feed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
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
	openFolderFollower(t, dir, store, 0)
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

// A rescan that fails (here the vault folder is gone, as when a share is
// unmounted) leaves the index as it was and does not stop the follower: it
// says why in its stats and retries until the folder is back, and watches
// the folder that came back.
func TestFolderFollowerOutlivesAMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Home.md"), []byte("# Home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := mustStore(t)
	f := openFolderFollower(t, dir, store, 50*time.Millisecond)
	want := map[string]string{"Home.md": "# Home\n"}
	waitIndexed(t, store, want)

	away := dir + ".away"
	if err := os.Rename(dir, away); err != nil {
		t.Fatal(err)
	}
	// The watch follows the folder's inode: a write in it is an event, and
	// its rescan finds no folder where the vault was.
	if err := os.WriteFile(filepath.Join(away, "Bread.md"), []byte("# Bread\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a failed rescan", func() bool { return f.Stats().LastError != "" })
	if !strings.Contains(f.Stats().LastError, "not a readable directory") {
		t.Errorf("LastError = %q", f.Stats().LastError)
	}
	select {
	case <-f.Done():
		t.Fatal("the follower stopped on a failed rescan")
	case <-time.After(200 * time.Millisecond): // a few retries
	}
	if diff := cmp.Diff(hashes(want), mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("while the folder is gone the index changed (-want +got):\n%s", diff)
	}

	// Back as another folder (a share mounted again): its notes are
	// indexed, and so is a note written in it after that, so it is watched.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Home.md", "Bread.md"} {
		text, err := os.ReadFile(filepath.Join(away, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want["Bread.md"] = "# Bread\n"
	waitIndexed(t, store, want)
	if err := os.WriteFile(filepath.Join(dir, "Cake.md"), []byte("# Cake\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want["Cake.md"] = "# Cake\n"
	waitIndexed(t, store, want)
	waitFor(t, 10*time.Second, "LastError cleared with the folder back", func() bool { return f.Stats().LastError == "" })
}

// openFolderFollower starts a follower of dir that rescans 20 ms after the
// last change, and after retry once a rescan failed (0: the default), and
// stops it when the test ends, failing the test if it stopped on an error.
func openFolderFollower(t *testing.T, dir string, store *index.Store, retry time.Duration) *FolderFollower {
	t.Helper()
	f := NewFolderFollower(dir, testCorpus, store.Feed(), quietLogger())
	f.Debounce = 20 * time.Millisecond
	if retry > 0 {
		f.Retry = retry
	}
	if err := f.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(context.Background()); err != nil {
			t.Errorf("folder follower stopped with: %v", err)
		}
	})
	return f
}
