//go:build !linux

package peertest

import (
	"syscall"
	"time"
)

// sysProcAttr returns nil: only Linux can tie btcd's life to the test
// process, elsewhere Stop and the test cleanups stop it.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// removeOrphanDirs does nothing where orphaned nodes cannot be told from
// running ones.
func removeOrphanDirs() {}

// ProcessCPU is not measured on this system: ok is false.
func ProcessCPU(int) (time.Duration, bool) { return 0, false }
