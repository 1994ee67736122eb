//go:build !unix

package modelfile

import (
	"io"
	"os"
)

// mapFile reads f into memory where there is no syscall.Mmap; the load's
// garbage collection takes it back.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
