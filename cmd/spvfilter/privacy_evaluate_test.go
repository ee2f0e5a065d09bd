package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestTargetValueSide: a target's value is printed with the digits that
// put it on its side of the bound: a miss never reads as a value that
// meets the target, nor a value that meets it as a miss, in the targets
// list and in the error of --require-targets; counts print whole.
func TestTargetValueSide(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name  string
		want  string
		value float64
		met   *bool
		print string
	}{
		{"a miss just under >= 0.95", ">= 0.95", 0.949996, &no, "0.949996"},
		{"a miss under >= 0.93", ">= 0.93", 0.92996, &no, "0.92996"},
		{"met exactly at the bound", ">= 0.95", 0.95, &yes, "0.95"},
		{"met, far from the bound", ">= 0.95", 0.987654, &yes, "0.9877"},
		{"a miss, far from the bound", ">= 0.95", 0.5, &no, "0.5"},
		{"a miss just above a band", "0.95 ± 0.03", 0.98000049, &no, "0.9800005"},
		{"a miss just under a band", "0.95 ± 0.03", 0.9199996, &no, "0.9199996"},
		{"met inside a band near its end", "0.95 ± 0.03", 0.97996, &yes, "0.98"},
		{"a count", "0", 12345, &no, "12345"},
		{"no verdict", ">= 0.95", 0.949996, nil, "0.95"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.value
			target := simulate.Target{Name: "candidates given P >= 0.95: fraction right", Want: tt.want, Value: &v, Met: tt.met}
			if got := targetValue(target); got != tt.print {
				t.Errorf("targetValue(%v, want %s, met %v) = %q, want %q", tt.value, tt.want, tt.met != nil && *tt.met, got, tt.print)
			}
			var out bytes.Buffer
			printScore(&out, &simulate.Score{Candidates: &simulate.ClaimScore{}, Targets: []simulate.Target{target}}, 0)
			if line := tt.print + " (want " + tt.want + ")"; !strings.Contains(out.String(), line) {
				t.Errorf("targets list:\n%s\nwant it to hold %q", out.String(), line)
			}
			err := missedTargets(&simulate.Score{Targets: []simulate.Target{target}})
			switch {
			case tt.met != nil && !*tt.met && (err == nil || !strings.Contains(err.Error(), ": "+tt.print+" (want")):
				t.Errorf("--require-targets: %v, want it to name %s", err, tt.print)
			case (tt.met == nil || *tt.met) && err != nil:
				t.Errorf("--require-targets: %v for a target not missed", err)
			}
		})
	}
}
