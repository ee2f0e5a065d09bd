package main

import (
	"strings"
	"testing"
)

// TestFloatFlagOutOfRange: a number flag given a number a float cannot
// hold is refused quoting the text given and saying why, whatever the
// flag. Before, a number too near 0 was read as 0 and refused as 0, the
// text given lost ("--fprate 0: want a rate between 0 and 1"), or the
// flag's value taken as 0 until another check refused the command, and
// one too large was refused as no number at all ("want a number, such
// as 0.001").
func TestFloatFlagOutOfRange(t *testing.T) {
	const (
		below = `is below the smallest number above 0 a float can hold (about 5e-324): it would be read as 0`
		above = `is above the largest number a float can hold (about 1.8e308)`
	)
	for _, tt := range []struct {
		args []string
		want string // the message, after "spvfilter: "
	}{
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "1e-400"}, `--fprate "1e-400": 1e-400 ` + below},
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "1e400"}, `--fprate "1e400": 1e400 ` + above},
		{[]string{"privacy", "model", "--fprate", "0x1p-2000"}, `--fprate "0x1p-2000": 0x1p-2000 ` + below},
		{[]string{"privacy", "model", "--addresses", "20", "--filters", "3", "--target-p-h-all", "1e-999"}, `--target-p-h-all "1e-999": 1e-999 ` + below},
		{[]string{"privacy", "evaluate", "--threshold", "2e-324"}, `--threshold "2e-324": 2e-324 ` + below},
		{[]string{"privacy", "simulate", "--pay-fraction", "-1e999"}, `--pay-fraction "-1e999": -1e999 is below the lowest number a float can hold (about -1.8e308)`},
		{[]string{"privacy", "analyze", "--link-threshold", "-1e-400"}, `--link-threshold "-1e-400": -1e-400 is above the largest number below 0 a float can hold (about -5e-324): it would be read as 0`},
		{[]string{"privacy", "simulate", "--out", "x", "--fprate", "1e-9..1e-400"}, `--fprate "1e-9..1e-400": 1e-400 ` + below},
		{[]string{"privacy", "simulate", "--out", "x", "--fprate", "1e400"}, `--fprate "1e400": 1e400 ` + above},
		{[]string{"privacy", "model", "--sweep", "fprate=1e-400"}, `--sweep "fprate=1e-400": fprate: "1e-400": 1e-400 ` + below + `; want each comma-separated item a number, START..END, START..END:STEP or START..END:xFACTOR`},
		// A negative number in a sweep is said as a flag's is: before,
		// beyond the largest, or below the smallest above 0.
		{[]string{"privacy", "model", "--sweep", "fprate=-1e400"}, `--sweep "fprate=-1e400": fprate: "-1e400": -1e400 is below the lowest number a float can hold (about -1.8e308); want each comma-separated item a number, START..END, START..END:STEP or START..END:xFACTOR`},
		{[]string{"privacy", "model", "--sweep", "addresses=-1e-400"}, `--sweep "addresses=-1e-400": addresses: "-1e-400": -1e-400 is above the largest number below 0 a float can hold (about -5e-324): it would be read as 0; want each comma-separated item a number, START..END, START..END:STEP or START..END:xFACTOR`},
		// A value that is no number is still said so.
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "abc"}, `--fprate "abc": want a number, such as 0.001 or 1e-4`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", tt.args...)
			if status != exitBadInput || stdout != "" || stderr != "spvfilter: "+tt.want+"\n" {
				t.Errorf("status %d, stdout %q, stderr %q: want %d and %q", status, stdout, stderr, exitBadInput, tt.want)
			}
		})
	}
}
