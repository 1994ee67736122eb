package lowprio

import "golang.org/x/sys/unix"

// lowestNice is the weakest priority a Linux thread may have.
const lowestNice = 19

// lowerPriority sets the calling thread's nice value to the lowest: on
// Linux a thread is a task of its own, and setpriority with its id changes
// it alone. Lowering a priority needs no privilege.
func lowerPriority() error {
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), lowestNice)
}
