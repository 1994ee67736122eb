//go:build !linux

package lowprio

import "errors"

// lowerPriority does nothing where a thread's priority cannot be set on
// its own: the pool's goroutines then run at the process's priority.
func lowerPriority() error { return errors.ErrUnsupported }
