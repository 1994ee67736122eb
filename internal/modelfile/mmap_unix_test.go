//go:build unix

package modelfile

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// A read of a mapping past the end of a file cut short under it faults
// (SIGBUS): noFault makes that an error, where it would end the process.
func TestNoFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, err := mapFile(f, int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var last byte
	err = noFault(func() error {
		last = data[len(data)-1]
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "a read of the mapped file faulted at 0x") {
		t.Errorf("reading past the cut: %v (read %q), want the fault as an error", err, last)
	}
	// The goroutine's setting is restored: a test goroutine crashes on a
	// fault again.
	if old := debug.SetPanicOnFault(false); old {
		t.Error("noFault left the goroutine panicking on faults")
	}
}
