package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes this test binary run as vaultask (see TestMain), so a test
// can run the real program in another process, as another user.
const asMainEnv = "VAULTASKTEST_MAIN"

// nobody is the user a test runs vaultask as when the tests run as root,
// who may write anywhere and so could never see a permission problem.
const nobody = 65534

// publicDir is a fresh directory every user may enter and read, removed
// when the test ends.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vaultask-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// vaultaskBinary is a copy of this test binary that every user may run.
func vaultaskBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(publicDir(t), "vaultask")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runAsUser runs vaultask with args in its own process, as an unprivileged
// user (nobody when the tests run as root), with env only, in dir. It
// returns the output and the exit code.
func runAsUser(t *testing.T, bin, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{asMainEnv + "=1", "HOME=" + dir, "PATH=/usr/bin:/bin"}, env...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("vaultask %q did not finish in a minute", args)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// A reader needs only read access: ask and stats work on an index in a
// directory the user may not write (a backup, a mount shared read-only),
// and a writer there is told it is a permission problem, and where.
func TestIndexInReadOnlyDirectory(t *testing.T) {
	bin := vaultaskBinary(t)
	vault := filepath.Join(publicDir(t), "vault")
	if err := os.MkdirAll(filepath.Join(vault, "Recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "Recipes", "Bread.md"), []byte("# Bread\n\nKnead the dough for ten minutes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(publicDir(t), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"VAULTASK_INDEX__PATH=" + filepath.Join(data, "vaultask.db"),
		"VAULTASK_OVERRIDES_FILE=" + filepath.Join(data, "none.json"),
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(data, "no-model"),
	}
	if _, stderr, err := run(t, env, "index", "--from-dir", vault); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}
	for _, p := range []string{data, filepath.Join(data, "vaultask.db")} {
		mode := os.FileMode(0o444)
		if p == data {
			mode = 0o555
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	home := publicDir(t)

	out, stderr, code := runAsUser(t, bin, home, env, "stats")
	if code != 0 || !strings.Contains(out, "1 (1 open, 0 personal)") {
		t.Fatalf("stats on a read-only index: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runAsUser(t, bin, home, env, "ask", "--dry-run", "--allow-web=false", "how long do I knead the dough?")
	if code != 0 || !strings.Contains(out, "Recipes/Bread.md") {
		t.Fatalf("ask on a read-only index: exit %d\n%s\n%s", code, out, stderr)
	}

	// A writer refuses, naming the permission problem and the directory.
	writeEnv := append(env[1:len(env):len(env)], "VAULTASK_INDEX__PATH="+filepath.Join(data, "new.db"))
	_, stderr, code = runAsUser(t, bin, home, writeEnv, "index", "--from-dir", vault)
	for _, want := range []string{"permission denied", "directory " + data + " is not writable", "index.path"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("index into a read-only directory: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
}
