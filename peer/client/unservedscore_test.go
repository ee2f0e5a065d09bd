package client

import (
	"fmt"
	"testing"
	"time"
)

// TestUnservedScoreDecays: a block announced and not served adds one to
// its address's score, a served block (n 0) erases nothing, and the
// score halves every unservedHalfLife; the scores kept stay within
// maxUnservedRecords, the lowest forgotten first.
func TestUnservedScoreDecays(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name  string
		steps []struct {
			after time.Duration
			n     int
		}
		want float64
	}{
		{"one served block erases nothing", []struct {
			after time.Duration
			n     int
		}{{0, 15}, {0, 0}, {0, 5}}, 20},
		{"halved after a half-life", []struct {
			after time.Duration
			n     int
		}{{0, 16}, {unservedHalfLife, 0}}, 8},
		{"a steady trickle stays bounded", []struct {
			after time.Duration
			n     int
		}{{0, 10}, {unservedHalfLife, 10}, {unservedHalfLife, 10}, {unservedHalfLife, 10}}, 10 + 10.0/2 + 10.0/4 + 10.0/8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u unservedScores
			now := t0
			var got float64
			for _, s := range tc.steps {
				now = now.Add(s.after)
				got = u.add("127.0.0.1:1", s.n, now)
			}
			if got < tc.want-1e-9 || got > tc.want+1e-9 {
				t.Errorf("score %v, want %v", got, tc.want)
			}
		})
	}
	var u unservedScores
	for i := range maxUnservedRecords + 10 {
		u.add(fmt.Sprintf("127.0.0.1:%d", i+1), 1+i%3, t0)
	}
	if len(u.by) > maxUnservedRecords {
		t.Errorf("%d scores kept, want at most %d", len(u.by), maxUnservedRecords)
	}
	if u.add("127.0.0.1:9", 0, t0) == 0 {
		t.Errorf("a score of 3 was forgotten before the lowest")
	}
}
