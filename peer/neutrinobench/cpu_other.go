//go:build !unix

package neutrinobench

import "time"

// processCPU is not measured on this system: it reports zero.
func processCPU() time.Duration { return 0 }
