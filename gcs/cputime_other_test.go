//go:build !linux

package gcs

// threadCPUTime is not available here; benchmarks report wall time only.
func threadCPUTime() (int64, bool) { return 0, false }
