package feed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	f := NewFolderFollower(dir, testCorpus, store, quietLogger())
	f.Debounce, f.Retry = 20*time.Millisecond, 50*time.Millisecond
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

	away := dir + ".away"
	if err := os.Rename(dir, away); err != nil {
		t.Fatal(err)
	}
	// The watch follows the folder's inode: a write in it is an event, and
	// its rescan finds no folder where the vault was.
	if err := os.WriteFile(filepath.Join(away, "Bread.md"), []byte("# Bread\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.Stats().LastError == "" {
		if time.Now().After(deadline) {
			t.Fatal("no failed rescan in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	deadline = time.Now().Add(10 * time.Second)
	for f.Stats().LastError != "" {
		if time.Now().After(deadline) {
			t.Fatalf("LastError still %q with the folder back", f.Stats().LastError)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
