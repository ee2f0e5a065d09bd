//go:build unix

package diskfile

import "syscall"

// openNonblock opens a named pipe without waiting for its other end.
const openNonblock = syscall.O_NONBLOCK
