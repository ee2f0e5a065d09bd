//go:build !linux

package neutrinobench

import "time"

// processCPU is not measured on this system: it reports zero.
func processCPU() time.Duration { return 0 }

// resetPeakRSS is not available on this system.
func resetPeakRSS() (uint64, bool) { return 0, false }

// pidWithArg is not available on this system.
func pidWithArg(string) (int, bool) { return 0, false }
