//go:build !unix

package client

// cpuTime is zero where the process's CPU time is not read: the
// benchmarks then report wall time only.
func cpuTime() int64 { return 0 }
