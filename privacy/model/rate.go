package model

import (
	"math"
	"strconv"
	"strings"
)

// maxRateDigits is the most significant digits a float64 needs.
const maxRateDigits = 17

// robustRate returns the rate to ask for filter s: the decimal with the
// fewest significant digits whose rounding cell (the numbers that round to
// it at its digits, R ± half a unit in its last digit) lies in the middle
// half, on a log scale, of the interval of rates that build s, and builds
// s at both ends; among those, the one nearest the interval's middle. The
// middle half keeps the rate at least a quarter of the interval from each
// edge, far beyond any difference between two implementations' logarithm
// or ln² 2. text is the decimal as printed (strconv's shortest form,
// which parses back to rate). The largest filter, which every rate from
// the smallest float64 builds, is placed by its top two decades.
//
// text is empty when no decimal of up to 17 digits fits, which needs an
// interval of a few float64 values; rate is then the interval's middle
// value.
func (s filterSizing) robustRate(rule SizingRule, elements uint32) (rate float64, text string) {
	lo, hi := max(s.rateLo, s.rateHi/100), s.rateHi
	mid := math.Sqrt(lo) * math.Sqrt(hi) // no underflow for tiny rates
	quarter := math.Pow(hi/lo, 0.25)
	a, b := lo*quarter, hi/quarter
	for digits := 1; digits <= maxRateDigits; digits++ {
		best, bestText := math.NaN(), ""
		for _, r := range decimalsNear(mid, digits) {
			t := strconv.FormatFloat(r, 'g', -1, 64)
			h := halfUnit(t)
			if r-h < a || r+h > b || !s.builtBy(rule, elements, r-h) || !s.builtBy(rule, elements, r+h) {
				continue
			}
			if math.IsNaN(best) || math.Abs(math.Log(r/mid)) < math.Abs(math.Log(best/mid)) {
				best, bestText = r, t
			}
		}
		if bestText != "" {
			return best, bestText
		}
	}
	return math.Float64frombits(math.Float64bits(s.rateLo)/2 + math.Float64bits(s.rateHi)/2), ""
}

// builtBy reports whether rule builds s from rate.
func (s filterSizing) builtBy(rule SizingRule, elements uint32, rate float64) bool {
	b, k := rule.Size(elements, rate)
	return b == s.bytes && k == s.hashFuncs
}

// decimalsNear returns the decimal of the given significant digits nearest
// x and its two neighbours at those digits.
func decimalsNear(x float64, digits int) []float64 {
	t := strconv.FormatFloat(x, 'e', digits-1, 64)
	r, _ := strconv.ParseFloat(t, 64)
	unit := 2 * halfUnitDigits(t, digits)
	var out []float64
	for _, c := range []float64{r - unit, r, r + unit} {
		if !(c > 0) {
			continue
		}
		// Snap to the decimal grid: c±unit is not exact in binary.
		c, _ = strconv.ParseFloat(strconv.FormatFloat(c, 'e', digits-1, 64), 64)
		out = append(out, c)
	}
	return out
}

// halfUnit is half a unit in the last significant digit of the decimal
// number t (as strconv formats a float64, in 'e' or plain notation): the
// numbers within it of t round to t at t's digits.
func halfUnit(t string) float64 {
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		exp, _ = strconv.Atoi(t[i+1:])
	}
	// The exponent of the last digit: minus the digits after the point.
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		exp -= len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp))
}

// halfUnitDigits is halfUnit of t formatted with 'e' and digits
// significant digits (its mantissa keeps trailing zeros).
func halfUnitDigits(t string, digits int) float64 {
	i := strings.IndexByte(t, 'e')
	exp, _ := strconv.Atoi(t[i+1:])
	return 0.5 * math.Pow(10, float64(exp-(digits-1)))
}
