//go:build !unix

package diskfile

// openNonblock: no named pipe to wait on.
const openNonblock = 0
