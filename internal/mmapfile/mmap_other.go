//go:build !unix

package mmapfile

import (
	"fmt"
	"os"
)

// Map reads path into memory where there is no syscall.Mmap. An empty file
// is ErrEmpty.
func Map(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("%w: %s", ErrEmpty, path)
	}
	return data, func() error { return nil }, nil
}

// Release does nothing where Map reads the file into the heap: those bytes
// are the model's to keep.
func Release([]byte) error { return nil }
