package main

import (
	"strings"
	"testing"
)

// TestSweepRangeWithoutStep: a --sweep range given without a step steps
// by 1, which a range narrower than 1 never takes: it is refused as bad
// input naming the range and the forms with a step, where before
// --sweep fprate=0.1..0.5 printed the one row of 0.1 as if it were the
// sweep asked for.
func TestSweepRangeWithoutStep(t *testing.T) {
	rows := []struct {
		sweep  string
		status int
		stderr string // on standard error ("" for none)
		rows   int    // table rows on standard output, when it succeeds
	}{
		{sweep: "fprate=0.1..0.5", status: exitBadInput, stderr: `--sweep "fprate=0.1..0.5": the range 0.1..0.5 has no step, and the default step 1 gives 0.1 alone: give one, as 0.1..0.5:0.1 or 0.1..0.5:x2`},
		{sweep: "fprate=0.001,0.0001..0.01", status: exitBadInput, stderr: "the range 0.0001..0.01 has no step"},
		{sweep: "addresses=1..4.5", status: exitBadInput, stderr: `the range 1..4.5 has no step, and the default step 1 stops at 4, short of its end 4.5`},
		{sweep: "addresses=1..5", status: exitOK, rows: 5},
		{sweep: "addresses=10..12", status: exitOK, rows: 3},
		{sweep: "fprate=0.1..0.5:0.1", status: exitOK, rows: 5},
		{sweep: "fprate=0.01..0.01", status: exitOK, rows: 1},
	}
	for _, r := range rows {
		t.Run(r.sweep, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", "privacy", "model", "--sweep", r.sweep)
			if status != r.status {
				t.Fatalf("status %d, want %d: %s", status, r.status, stderr)
			}
			if !strings.Contains(stderr, r.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, r.stderr)
			}
			if r.status == exitOK {
				if got := len(strings.Split(strings.TrimSpace(stdout), "\n")) - 1; got != r.rows {
					t.Errorf("%d rows, want %d:\n%s", got, r.rows, stdout)
				}
			}
		})
	}
}
