//go:build !linux

package client

import "time"

// nodeCPU is not measured outside Linux.
func nodeCPU(string) (time.Duration, bool) { return 0, false }
