package main

import "testing"

// TestCounted: a count and its noun, singular for one and plural for
// none and more, as the plan's line prints them.
func TestCounted(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "shard", "0 shards"},
		{1, "session", "1 session"},
		{2, "universe file", "2 universe files"},
		{12, "group", "12 groups"},
	} {
		if got := counted(c.n, c.noun); got != c.want {
			t.Errorf("counted(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
