package model

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ErrBadSweep reports a malformed sweep specification.
var ErrBadSweep = errors.New("privacy: bad sweep")

// MaxSweepPoints is the most values one sweep may expand to: ParseSweep
// refuses a sweep that gives more.
const MaxSweepPoints = 10000

// Sweep varies one model parameter over a list of values.
type Sweep struct {
	// Var is one of sweepVars.
	Var    string    `json:"var"`
	Values []float64 `json:"values"`
}

// sweepVars are the parameters a sweep can vary.
var sweepVars = []string{"addresses", "fprate", "filters", "universe-size"}

// ParseSweep parses VAR=SPEC, where VAR is one of sweepVars and SPEC is a
// comma-separated list of items, each a value, a range START..END (step 1),
// START..END:STEP (additive step) or START..END:xFACTOR (geometric step).
// Examples: "addresses=1..100", "addresses=10..1000:10",
// "fprate=0.0001,0.0005,0.001", "fprate=0.00001..0.01:x10".
func ParseSweep(spec string) (Sweep, error) {
	name, list, ok := strings.Cut(spec, "=")
	if !ok {
		return Sweep{}, fmt.Errorf("%w: %q is not VAR=VALUES (VAR one of %s)", ErrBadSweep, spec, strings.Join(sweepVars, ", "))
	}
	name = strings.TrimSpace(name)
	if name == "universe" {
		name = "universe-size"
	}
	known := false
	for _, v := range sweepVars {
		known = known || v == name
	}
	if !known {
		return Sweep{}, fmt.Errorf("%w: unknown variable %q (want one of %s)", ErrBadSweep, name, strings.Join(sweepVars, ", "))
	}
	s := Sweep{Var: name}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		vals, err := parseSweepItem(item)
		var ne *numberError
		var pe *SweepPartError
		switch {
		case errors.As(err, &pe):
			pe.Var = name
			return Sweep{}, fmt.Errorf("%w: %s: %q: %w", ErrBadSweep, name, item, err)
		case errors.As(err, &ne) || errors.Is(err, errEmptyValue):
			return Sweep{}, fmt.Errorf("%w: %s: %q: %w; want %s", ErrBadSweep, name, item, err, sweepItemForms)
		case err != nil:
			return Sweep{}, fmt.Errorf("%w: %s: %q: %w", ErrBadSweep, name, item, err)
		}
		s.Values = append(s.Values, vals...)
		if len(s.Values) > MaxSweepPoints {
			return Sweep{}, fmt.Errorf("%w: %s: more than %d values", ErrBadSweep, name, MaxSweepPoints)
		}
	}
	for _, v := range s.Values {
		if err := checkSweepValue(name, v); err != nil {
			return Sweep{}, fmt.Errorf("%w: %w", ErrBadSweep, err)
		}
	}
	return s, nil
}

func parseSweepItem(item string) ([]float64, error) {
	if item == "" {
		return nil, errEmptyValue
	}
	lo, rest, isRange := strings.Cut(item, "..")
	if !isRange {
		v, err := parseNumber(item)
		return []float64{v}, err
	}
	hi, step, hasStep := strings.Cut(rest, ":")
	form := "START..END"
	switch {
	case hasStep && strings.HasPrefix(step, "x"):
		form = "START..END:xFACTOR"
	case hasStep:
		form = "START..END:STEP"
	}
	start, err := parsePart(lo, "START", form)
	if err != nil {
		return nil, err
	}
	end, err := parsePart(hi, "END", form)
	if err != nil {
		return nil, err
	}
	if end < start {
		return nil, errors.New("range end below its start: want START..END with END at least START")
	}
	geometric, inc := false, 1.0
	if hasStep {
		part := "STEP"
		if strings.HasPrefix(step, "x") {
			geometric, part = true, "FACTOR"
			step = step[1:]
		}
		if inc, err = parsePart(step, part, form); err != nil {
			return nil, err
		}
	}
	var out []float64
	switch {
	case geometric && !(inc > 1):
		return nil, errors.New("geometric factor must exceed 1: want START..END:xFACTOR with FACTOR above 1, such as x10")
	case geometric && !(start > 0):
		return nil, errors.New("geometric range must start above 0: want START..END:xFACTOR with START above 0")
	case !geometric && !(inc > 0):
		return nil, errors.New("step must be above 0: want START..END:STEP with STEP above 0")
	}
	// Values are computed from the index, not accumulated, so that
	// 0.1-steps do not drift; a relative slack keeps the end point.
	slack := 1e-9 * math.Max(math.Abs(end), 1)
	for i := 0; ; i++ {
		var v float64
		if geometric {
			v = start * math.Pow(inc, float64(i))
		} else {
			v = start + float64(i)*inc
		}
		if v > end+slack {
			break
		}
		// 0.1 + 2·0.1 is 0.30000000000000004 in binary: the value the
		// user's decimal steps name is kept, to 15 significant digits.
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
		if len(out) >= MaxSweepPoints {
			return nil, fmt.Errorf("more than %d values", MaxSweepPoints)
		}
		out = append(out, v)
	}
	return out, nil
}

// sweepFormExamples are, for each variable, a sweep of each form of a
// range (fprate's START..END has a step: the default step 1 leaves one
// rate).
var sweepFormExamples = map[string]map[string]string{
	"addresses":     {"START..END": "10..100", "START..END:STEP": "10..100:10", "START..END:xFACTOR": "10..10000:x10"},
	"filters":       {"START..END": "1..10", "START..END:STEP": "1..10:3", "START..END:xFACTOR": "1..16:x2"},
	"universe-size": {"START..END": "1000..1010", "START..END:STEP": "1000..10000:1000", "START..END:xFACTOR": "1000..10000000:x10"},
	"fprate":        {"START..END": "0.001..0.01:0.001", "START..END:STEP": "0.001..0.01:0.001", "START..END:xFACTOR": "0.00001..0.01:x10"},
}

// SweepPartError is a part of a range in a sweep's list (its START, END,
// STEP, or the FACTOR after x) that is missing or is no number. It wraps
// strconv's error where there is one.
type SweepPartError struct {
	Var  string // the variable swept, as "addresses"
	Part string // "START", "END", "STEP" or "FACTOR"
	Text string // the part as given; "" when it is missing
	Form string // the range's form: "START..END", "START..END:STEP" or "START..END:xFACTOR"
	err  error
}

func (e *SweepPartError) Error() string {
	what := fmt.Sprintf("the %s %q is not a number", e.Part, e.Text)
	if e.Text == "" {
		what = "the " + e.Part + " is missing"
	}
	if example, ok := sweepFormExamples[e.Var][e.Form]; ok {
		return fmt.Sprintf("%s: want %s, such as %s=%s", what, e.Form, e.Var, example)
	}
	return fmt.Sprintf("%s: want %s", what, e.Form)
}

// Unwrap returns strconv's error, or nil.
func (e *SweepPartError) Unwrap() error { return e.err }

// parsePart reads the part (as "END") of a range of the form given: a
// part that is missing or no number is a *SweepPartError, one a float64
// cannot hold the *numberError of parseNumber.
func parsePart(s, part, form string) (float64, error) {
	v, err := parseNumber(s)
	var ne *numberError
	var fr *FloatRangeError
	if errors.As(err, &ne) && !errors.As(err, &fr) {
		return 0, &SweepPartError{Part: part, Text: strings.TrimSpace(s), Form: form, err: ne.err}
	}
	return v, err
}

// sweepItemForms says what one item of a sweep's list may be.
const sweepItemForms = "each comma-separated item a number, START..END, START..END:STEP or START..END:xFACTOR"

// errEmptyValue is an empty item in a sweep's list.
var errEmptyValue = errors.New("empty value")

// numberError is a sweep's value that is not a finite number a float64
// holds; it wraps strconv's error where there is one, or the
// *FloatRangeError of a number a float64 cannot hold.
type numberError struct {
	text string
	err  error
}

func (e *numberError) Error() string {
	var fr *FloatRangeError
	if errors.As(e.err, &fr) {
		return fr.Error()
	}
	return fmt.Sprintf("%q is not a number", e.text)
}
func (e *numberError) Unwrap() error { return e.err }

// parseNumber reads one value of a sweep: a finite number, and one a
// float64 holds (not one so large it reads as infinite, nor one so near
// 0 it reads as 0: refused saying so, the value given quoted).
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if err := FloatHolds(s); err != nil {
		return 0, &numberError{s, err}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &numberError{s, err}
	}
	return v, nil
}

// FloatRangeError is a number's text that a float64 cannot hold: beyond
// the largest a float64 holds (strconv reads it as infinite), or so near
// 0 that strconv reads it as 0.
type FloatRangeError struct {
	Text  string // the number as given
	Above bool   // beyond the largest magnitude; else nearer 0 than the smallest
	err   error  // strconv's error, if it gave one
}

func (e *FloatRangeError) Error() string {
	neg := strings.HasPrefix(strings.TrimSpace(e.Text), "-")
	switch {
	case e.Above && neg:
		return fmt.Sprintf("%s is below the lowest number a float can hold (about -1.8e308)", e.Text)
	case e.Above:
		return fmt.Sprintf("%s is above the largest number a float can hold (about 1.8e308)", e.Text)
	case neg:
		return fmt.Sprintf("%s is above the largest number below 0 a float can hold (about -5e-324): it would be read as 0", e.Text)
	}
	return fmt.Sprintf("%s is below the smallest number above 0 a float can hold (about 5e-324): it would be read as 0", e.Text)
}

// Unwrap returns strconv's error, or nil.
func (e *FloatRangeError) Unwrap() error { return e.err }

// FloatHolds returns a *FloatRangeError for s when it parses as a number
// a float64 cannot hold, as strconv.ParseFloat reads it: infinite, or 0
// for a number that is not 0. It returns nil for any other text, one that
// is no number included, and for "Inf" and "NaN", which a float holds.
func FloatHolds(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && math.IsInf(x, 0):
		return &FloatRangeError{Text: s, Above: true, err: err}
	case err != nil || x != 0:
		return nil
	}
	// The exponent of a big.Float reaches far below a float64's.
	if b, _, err := big.ParseFloat(s, 0, 64, big.ToNearestEven); err == nil && b.Sign() != 0 {
		return &FloatRangeError{Text: s}
	}
	return nil
}

func checkSweepValue(name string, v float64) error {
	switch name {
	case "fprate":
		if !(v > 0 && v < 1) {
			return fmt.Errorf("fprate %v not in (0,1)", v)
		}
	case "addresses", "filters", "universe-size":
		if v < 1 || v != math.Trunc(v) || v > 1e15 {
			return fmt.Errorf("%s %v is not a positive whole number", name, v)
		}
	}
	return nil
}

// apply returns p with the swept parameter set to v.
func (s Sweep) apply(p Params, v float64) Params {
	switch s.Var {
	case "addresses":
		p.Addresses = uint32(math.Min(v, math.MaxUint32))
	case "fprate":
		p.FPRate = v
	case "filters":
		p.Filters = uint32(math.Min(v, math.MaxUint32))
	case "universe-size":
		p.UniverseSize = uint64(v)
	}
	return p
}

// Run evaluates the model at every value of the sweep.
func (s Sweep) Run(base Params) ([]*Result, error) {
	out := make([]*Result, 0, len(s.Values))
	for _, v := range s.Values {
		r, err := Evaluate(s.apply(base, v))
		if err != nil {
			return nil, fmt.Errorf("%s=%v: %w", s.Var, v, err)
		}
		out = append(out, r)
	}
	return out, nil
}
