//go:build !linux

package store

import (
	"errors"
	"time"
)

func dropCache(string) error { return errors.New("not supported") }

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
