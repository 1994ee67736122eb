//go:build unix

package mmapfile

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Map maps path read-only. The pages are the kernel's page cache, so a
// large table in the file costs no heap and only the rows read become
// resident. An empty file is ErrEmpty.
func Map(path string) (data []byte, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil, fmt.Errorf("%w: %s", ErrEmpty, path)
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: %d bytes is too large to map", path, size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}

// Release takes data's pages out of the process's memory, where they count
// in its resident set: the kernel keeps them in its page cache, and a page
// read again is mapped again. A model that copies its layers to the heap
// at load reads most of its file once; without Release those pages would
// stay in the process's RSS for as long as it runs.
func Release(data []byte) error {
	return unix.Madvise(data, unix.MADV_DONTNEED)
}
