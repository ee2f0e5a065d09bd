package peertest

import (
	"os"
	"strconv"
	"testing"
)

// EnvCount returns the positive number in the environment variable name,
// or def when it is unset; anything else fails the test. The long
// measurements read their sizes (blocks, rounds, nodes) so.
func EnvCount(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
