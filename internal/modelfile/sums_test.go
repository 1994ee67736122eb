package modelfile

import (
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// sumsOf pins files (name → content) behind an archive line.
func sumsOf(tb testing.TB, files map[string]string) Sums {
	tb.Helper()
	text := "# test\nSHA512 (a.tgz) = " + strings.Repeat("ab", 64) + "\n"
	for name, content := range files {
		text += fmt.Sprintf("SHA256 (%s) = %x\n", name, sha256.Sum256([]byte(content)))
	}
	s, err := Parse(text)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestParse(t *testing.T) {
	good := strings.Repeat("0a", 32)
	s, err := Parse("# a model\n\nSHA256 (m.jar) = " + strings.Repeat("ff", 32) + "\nSHA256 (model.onnx) = " + good + "\n  SHA256 (a (b).json) = " + good + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.pinned("model.onnx") != good || s.pinned("a (b).json") != good {
		t.Errorf("pins %v", s.sha256)
	}
	if _, ok := s.sha256["m.jar"]; ok {
		t.Error("the archive's sum is taken for an installed file's")
	}
	bad := []struct{ text, want string }{
		{"", "no installed file"},
		{"SHA256 (m.jar) = " + good, "no installed file"},
		{"SHA256 (m.jar) = " + good + "\nMD5 (x) = " + good, `unknown algorithm "MD5"`},
		{"SHA256 (m.jar) = " + good + "\nSHA512 (x) = " + strings.Repeat("0a", 64), "an installed file's is SHA256"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (x) = " + good[:60], "not 64 lower-case hex digits"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (x) = " + strings.ToUpper(good), "not 64 lower-case hex digits"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (x) = " + strings.Repeat("zz", 32), "is not hex"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (../x) = " + good, "not a file name"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (d/x) = " + good, "not a file name"},
		{"SHA256 (m.jar) = " + good + "\nSHA256 (x) = " + good + "\nSHA256 (x) = " + good, "x appears twice"},
		{good + "  x", "is not ALGO (name) = hex"},
		{"SHA256 (x) " + good, "is not ALGO (name) = hex"},
	}
	for _, tt := range bad {
		if _, err := Parse(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.text, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	good := strings.Repeat("0a", 32)
	f.Add("SHA512 (a.tgz) = " + strings.Repeat("ab", 64) + "\nSHA256 (x) = " + good + "\n")
	f.Add("# c\nSHA256 (a (b)) = " + good + "\nSHA256 ( ) = " + good)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		for name, sum := range s.sha256 {
			if len(sum) != 64 || name == "" || strings.Contains(name, "/") {
				t.Fatalf("Parse(%q) pinned %q for %q", text, sum, name)
			}
			// A pinned file has a digest.
			if d := s.Digest(name); !strings.HasPrefix(d, "sha256:") {
				t.Fatalf("Digest(%q) = %q", name, d)
			}
		}
	})
}

func TestCheckAndFS(t *testing.T) {
	s := sumsOf(t, map[string]string{"vocab.json": `{"a":1}`, "w.bin": "weights"})
	fsys := fstest.MapFS{
		"vocab.json": {Data: []byte(`{"a":2}`)},
		"w.bin":      {Data: []byte("weights")},
		"extra":      {Data: []byte("x")},
	}
	if err := s.Check("w.bin", "/m/w.bin", []byte("weights")); err != nil {
		t.Errorf("Check(the pinned bytes) = %v", err)
	}
	checked := s.FS(fsys)
	if b, err := checked.ReadFile("w.bin"); err != nil || string(b) != "weights" {
		t.Errorf("ReadFile(w.bin) = %q, %v", b, err)
	}
	if _, err := checked.ReadFile("vocab.json"); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "vocab.json does not match its pinned sum: its sha256 is ") {
		t.Errorf("ReadFile(a damaged file) = %v, want ErrMismatch naming it", err)
	}
	if _, err := checked.ReadFile("extra"); err == nil || !strings.Contains(err.Error(), "no sum is pinned") {
		t.Errorf("ReadFile(a file with no sum) = %v", err)
	}
	if _, err := checked.Open("w.bin"); err == nil {
		t.Error("Open goes around the check")
	}
}

func TestDigest(t *testing.T) {
	a := sumsOf(t, map[string]string{"m.onnx": "one", "tok.json": "two"})
	b := sumsOf(t, map[string]string{"m.onnx": "one", "tok.json": "three"})
	if a.Digest("m.onnx", "tok.json") == b.Digest("m.onnx", "tok.json") {
		t.Error("two tokenizers, one digest")
	}
	if a.Digest("m.onnx") != b.Digest("m.onnx") {
		t.Error("the same file, two digests")
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%x  m.onnx\n", sha256.Sum256([]byte("one"))))
	if got, want := a.Digest("m.onnx"), fmt.Sprintf("sha256:%x", h); got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
}

// The archive's sum is checked with its own algorithm, and the installed
// files are listed in the file's order.
func TestArchiveAndNames(t *testing.T) {
	for _, algo := range []string{"SHA256", "SHA512"} {
		h := map[string]hash.Hash{"SHA256": sha256.New(), "SHA512": sha512.New()}[algo]
		h.Write([]byte("the archive"))
		text := fmt.Sprintf("%s (m.tgz) = %x\nSHA256 (z.bin) = %s\nSHA256 (a.json) = %s\n", algo, h.Sum(nil), strings.Repeat("0a", 32), strings.Repeat("0b", 32))
		s, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Names(); !slices.Equal(got, []string{"z.bin", "a.json"}) {
			t.Errorf("%s: Names() = %q, want the file's order", algo, got)
		}
		a := s.Archive()
		if a.Name != "m.tgz" {
			t.Errorf("%s: the archive is %q, want m.tgz", algo, a.Name)
		}
		good := a.NewHash()
		good.Write([]byte("the archive"))
		if err := a.Check(good); err != nil {
			t.Errorf("%s: Check(the pinned bytes) = %v", algo, err)
		}
		bad := a.NewHash()
		bad.Write([]byte("another archive"))
		want := "m.tgz does not match its pinned sum: its " + strings.ToLower(algo) + " is "
		if err := a.Check(bad); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Check(other bytes) = %v, want ErrMismatch containing %q", algo, err, want)
		}
	}
	s := sumsOf(t, map[string]string{"w.bin": "weights"})
	sum := sha256.Sum256([]byte("weights"))
	if err := s.CheckSum("w.bin", "/m/w.bin", sum[:]); err != nil {
		t.Errorf("CheckSum(the pinned sum) = %v", err)
	}
	if err := s.CheckSum("w.bin", "/m/w.bin", make([]byte, sha256.Size)); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "/m/w.bin does not match") {
		t.Errorf("CheckSum(another sum) = %v, want ErrMismatch naming the path", err)
	}
}
