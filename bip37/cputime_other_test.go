//go:build !linux

package bip37

// threadCPUTime is not available here; benchmarks report wall time only.
func threadCPUTime() (int64, bool) { return 0, false }
