//go:build !unix

package e5

import "os"

// mapFile reads path into memory where there is no syscall.Mmap.
func mapFile(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
