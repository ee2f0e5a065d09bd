package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSweep(t *testing.T) {
	tests := []struct {
		spec string
		v    string
		want []float64
	}{
		{"addresses=1..5", "addresses", []float64{1, 2, 3, 4, 5}},
		{"addresses=10..40:10", "addresses", []float64{10, 20, 30, 40}},
		{"addresses=1,3,5..6", "addresses", []float64{1, 3, 5, 6}},
		{"fprate=0.0001,0.001", "fprate", []float64{0.0001, 0.001}},
		{"fprate=0.1..0.3:0.1", "fprate", []float64{0.1, 0.2, 0.3}},
		{"fprate=0.00001..0.1:x10", "fprate", []float64{0.00001, 0.0001, 0.001, 0.01, 0.1}},
		{"universe=1000..4000:x2", "universe-size", []float64{1000, 2000, 4000}},
		{"filters=1..3", "filters", []float64{1, 2, 3}},
	}
	for _, tt := range tests {
		s, err := ParseSweep(tt.spec)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if s.Var != tt.v || len(s.Values) != len(tt.want) {
			t.Errorf("%q: %s %v, want %s %v", tt.spec, s.Var, s.Values, tt.v, tt.want)
			continue
		}
		for i := range tt.want {
			if !relClose(s.Values[i], tt.want[i], 1e-12) {
				t.Errorf("%q: value %d = %v, want %v", tt.spec, i, s.Values[i], tt.want[i])
			}
		}
	}
	for _, bad := range []string{"addresses", "colour=1", "addresses=", "addresses=5..1", "addresses=1..5:0",
		"addresses=1.5", "addresses=0", "fprate=1", "fprate=0..0.1:x10", "fprate=0.1..0.2:x1", "addresses=1..1000000",
		"addresses=a..b", "fprate=NaN"} {
		if _, err := ParseSweep(bad); !errors.Is(err, ErrBadSweep) {
			t.Errorf("%q: error %v, want ErrBadSweep", bad, err)
		}
	}
}

// TestParseSweepDecimalSteps: the values of a decimal step are the
// decimals it names, exactly (0.3, not 0.30000000000000004), so that
// tables, warnings and JSON show them as given.
func TestParseSweepDecimalSteps(t *testing.T) {
	for spec, want := range map[string][]float64{
		"fprate=0.1..0.9:0.1":     {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9},
		"fprate=0.00001..0.1:x10": {0.00001, 0.0001, 0.001, 0.01, 0.1},
		"addresses=1..10:3":       {1, 4, 7, 10},
	} {
		s, err := ParseSweep(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if !slices.Equal(s.Values, want) {
			t.Errorf("%q: %v, want %v", spec, s.Values, want)
		}
	}
}

// TestParseSweepErrorsSayWhatIsWanted: a value that is not a number keeps
// strconv's error wrapped, and an item that does not parse says what an
// item may be.
func TestParseSweepErrorsSayWhatIsWanted(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		numErr  bool
		message string
	}{
		{"addresses=x", true, `addresses: "x": "x" is not a number; want each comma-separated item a number, START..END`},
		{"addresses=1..5:xq", true, `the FACTOR "q" is not a number: want START..END:xFACTOR`},
		{"fprate=1e400", true, `fprate: "1e400": 1e400 is above the largest number a float can hold (about 1.8e308); want`},
		{"fprate=1e-400", false, `fprate: "1e-400": 1e-400 is below the smallest number above 0 a float can hold (about 5e-324): it would be read as 0; want`},
		{"fprate=1e-9..1e-400:x10", false, `"1e-9..1e-400:x10": 1e-400 is below the smallest number above 0 a float can hold`},
		{"fprate=-1e400", true, `fprate: "-1e400": -1e400 is below the lowest number a float can hold (about -1.8e308); want`},
		{"addresses=-1e-400", false, `addresses: "-1e-400": -1e-400 is above the largest number below 0 a float can hold (about -5e-324): it would be read as 0; want`},
		{"fprate=0e-999", false, `fprate 0 not in (0,1)`},
		{"fprate=NaN", false, `"NaN" is not a number; want`},
		{"addresses=1,,2", false, `addresses: "": empty value; want each comma-separated item`},
		{"addresses", false, `"addresses" is not VAR=VALUES (VAR one of addresses, fprate, filters, universe-size)`},
	} {
		_, err := ParseSweep(tc.spec)
		var ne *strconv.NumError
		if !errors.Is(err, ErrBadSweep) || errors.As(err, &ne) != tc.numErr || !strings.Contains(fmt.Sprint(err), tc.message) {
			t.Errorf("%q: %v (wraps a *strconv.NumError: %v), want %q (wrapping one: %v)", tc.spec, err, errors.As(err, &ne), tc.message, tc.numErr)
		}
	}
}

// TestParseSweepNamesBadPart: a part of a range that is missing or no
// number is named (START, END, STEP or FACTOR), with the form of the
// range it belongs to and a sweep of that form for the variable, which
// parses. Before, the message was strconv's about the part alone (""
// is not a number) and the forms of every item.
func TestParseSweepNamesBadPart(t *testing.T) {
	for _, tt := range []struct {
		spec, part, text, form string
		message                string
	}{
		{"addresses=1..10:x", "FACTOR", "", "START..END:xFACTOR",
			`addresses: "1..10:x": the FACTOR is missing: want START..END:xFACTOR, such as addresses=10..10000:x10`},
		{"addresses=1..10:", "STEP", "", "START..END:STEP", `the STEP is missing: want START..END:STEP, such as addresses=10..100:10`},
		{"filters=1..", "END", "", "START..END", `filters: "1..": the END is missing: want START..END, such as filters=1..10`},
		{"universe-size=..5", "START", "", "START..END", `the START is missing: want START..END, such as universe-size=1000..1010`},
		{"fprate=0.1..b:0.1", "END", "b", "START..END:STEP", `the END "b" is not a number: want START..END:STEP, such as fprate=0.001..0.01:0.001`},
		{"fprate=0.001..0.1:xq", "FACTOR", "q", "START..END:xFACTOR", `the FACTOR "q" is not a number: want START..END:xFACTOR, such as fprate=0.00001..0.01:x10`},
	} {
		_, err := ParseSweep(tt.spec)
		var pe *SweepPartError
		if !errors.Is(err, ErrBadSweep) || !errors.As(err, &pe) {
			t.Errorf("%s: %v, want an ErrBadSweep wrapping a *SweepPartError", tt.spec, err)
			continue
		}
		if pe.Part != tt.part || pe.Text != tt.text || pe.Form != tt.form || !strings.Contains(err.Error(), tt.message) {
			t.Errorf("%s: %v (part %q %q, form %q), want part %q %q, form %q, saying %q", tt.spec, err, pe.Part, pe.Text, pe.Form, tt.part, tt.text, tt.form, tt.message)
		}
		example := tt.message[strings.LastIndex(tt.message, "such as ")+len("such as "):]
		if _, err := ParseSweep(example); err != nil {
			t.Errorf("%s: the example %s: %v", tt.spec, example, err)
		}
	}
	for v, forms := range sweepFormExamples {
		for form, example := range forms {
			if _, err := ParseSweep(v + "=" + example); err != nil {
				t.Errorf("the example of %s for %s: %v", form, v, err)
			}
		}
	}
}

// TestParseSweepLimit: a sweep of MaxSweepPoints values is taken, one of
// a value more refused with ErrBadSweep, whether one range or several
// items give them.
func TestParseSweepLimit(t *testing.T) {
	n := MaxSweepPoints
	for _, tt := range []struct {
		spec string
		want int // values taken; 0: refused
	}{
		{fmt.Sprintf("addresses=1..%d", n), n},
		{fmt.Sprintf("addresses=1..%d", n+1), 0},
		{fmt.Sprintf("filters=1..%d,%d", n-1, n+5), n},
		{fmt.Sprintf("filters=1..%d,%d,%d", n-1, n+5, n+6), 0},
		{fmt.Sprintf("addresses=2..%d:2", 2*n), n},
		{fmt.Sprintf("addresses=2..%d:2", 2*n+2), 0},
	} {
		s, err := ParseSweep(tt.spec)
		switch {
		case tt.want == 0 && !errors.Is(err, ErrBadSweep):
			t.Errorf("%s: %d values, %v; want it refused", tt.spec, len(s.Values), err)
		case tt.want > 0 && (err != nil || len(s.Values) != tt.want):
			t.Errorf("%s: %d values, %v; want %d", tt.spec, len(s.Values), err, tt.want)
		}
	}
}

// TestFloatHolds: the values FloatHolds refuses are those strconv reads
// as infinite, or as 0 for a number that is not 0.
func TestFloatHolds(t *testing.T) {
	for _, tt := range []struct {
		s     string
		above bool
		ok    bool // held: nil
	}{
		{"1e-400", false, false},
		{"-1e-400", false, false},
		{"1e400", true, false},
		{"-1e400", true, false},
		{"0x1p-1100", false, false},
		{"5e-324", false, true},
		{"1.7e308", false, true},
		{"0e-999", false, true},
		{"-0", false, true},
		{"inf", false, true}, // a float holds it; a caller's own check refuses it
		{"nan", false, true},
		{"abc", false, true}, // no number: the caller's parse says so
	} {
		err := FloatHolds(tt.s)
		var fr *FloatRangeError
		switch {
		case tt.ok && err != nil:
			t.Errorf("%q: %v, want nil", tt.s, err)
		case !tt.ok && (!errors.As(err, &fr) || fr.Above != tt.above || fr.Text != tt.s):
			t.Errorf("%q: %#v, want a *FloatRangeError (above %v)", tt.s, err, tt.above)
		}
	}
}
