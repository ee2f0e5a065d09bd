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

// TestSweepNamesBadPart: a --sweep range with a part missing or not a
// number is bad input that names the flag, the item, the part (START,
// END, STEP or FACTOR) and the form of range it belongs to, with an
// example of that form. Before, it said only `"" is not a number` of the
// part and listed every form an item may take.
func TestSweepNamesBadPart(t *testing.T) {
	for sweep, want := range map[string]string{
		"addresses=1..10:x":  `--sweep "addresses=1..10:x": addresses: "1..10:x": the FACTOR is missing: want START..END:xFACTOR, such as addresses=10..10000:x10`,
		"addresses=1..10:":   `--sweep "addresses=1..10:": addresses: "1..10:": the STEP is missing: want START..END:STEP, such as addresses=10..100:10`,
		"filters=..5":        `--sweep "filters=..5": filters: "..5": the START is missing: want START..END, such as filters=1..10`,
		"fprate=0.001..z:x2": `--sweep "fprate=0.001..z:x2": fprate: "0.001..z:x2": the END "z" is not a number: want START..END:xFACTOR, such as fprate=0.00001..0.01:x10`,
	} {
		t.Run(sweep, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", "privacy", "model", "--sweep", sweep)
			if status != exitBadInput || !strings.Contains(stderr, want) || strings.Contains(stderr, `"" is not a number`) {
				t.Errorf("status %d, stderr %q: want status %d and %q", status, stderr, exitBadInput, want)
			}
		})
	}
}
