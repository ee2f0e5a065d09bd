package simulate

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
)

// interval is an interval a report gives on one of its quantities.
type interval struct {
	// quantity is the field the interval is about ("estimated_wallet",
	// "probability"), or "" for a bare "interval" field, which is about
	// the object's own estimate.
	quantity  string
	key       string // the field it was found in, for messages
	low, high float64
	level     float64 // nominal coverage; 0.95 unless the report says
}

// defaultLevel is the coverage an interval is taken to promise when the
// report does not say.
const defaultLevel = 0.95

// intervalKeys are the field names of a bare interval, about the object's
// own estimate.
var intervalKeys = []string{"interval", "ci", "confidence_interval", "credible_interval"}

// findIntervals returns the intervals among an object's fields, in the
// order of their keys, and the keys they use. It recognizes:
//
//   - X_low and X_high (or X_lower and X_upper), numbers: an interval on X;
//   - X_interval or X_ci: an object with low and high (or lower and
//     upper), or a list of two numbers: an interval on X;
//   - interval, ci, confidence_interval, credible_interval: the same
//     forms, on the object's own estimate;
//   - X an object with low and high: an interval on X.
//
// An interval object's "level" or "confidence" field gives its nominal
// coverage, as does an X_level field beside X_low and X_high.
func findIntervals(o object) ([]interval, map[string]bool) {
	var out []interval
	used := map[string]bool{}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, suffix := range [][2]string{{"_low", "_high"}, {"_lower", "_upper"}} {
			base, ok := strings.CutSuffix(k, suffix[0])
			if !ok {
				continue
			}
			lo, hi := o.num(k), o.num(base+suffix[1])
			if lo == nil || hi == nil {
				continue
			}
			iv := interval{quantity: base, key: k, low: *lo, high: *hi, level: defaultLevel}
			if lv := o.num(base + "_level"); lv != nil {
				if l := asShare(*lv); l > 0 && l <= 1 {
					iv.level = l // a level of 0 states none
				}
				used[base+"_level"] = true
			}
			out = append(out, iv)
			used[k], used[base+suffix[1]] = true, true
		}
		quantity, named := "", false
		if slices.Contains(intervalKeys, k) {
			named = true
		} else if base, ok := strings.CutSuffix(k, "_interval"); ok {
			quantity, named = base, true
		} else if base, ok := strings.CutSuffix(k, "_ci"); ok {
			quantity, named = base, true
		}
		if !named {
			quantity = k // an estimate given as an object with its bounds
		}
		if !named && !startsObject(o[k]) {
			continue // only an object is an interval without a name: lists of heights are not decoded
		}
		if iv, ok := parseInterval(o[k]); ok && (named || iv.fromObject) {
			out = append(out, interval{quantity: quantity, key: k, low: iv.low, high: iv.high, level: iv.level})
			used[k] = true
		}
	}
	return out, used
}

// startsObject reports whether raw is a JSON object.
func startsObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

type parsedInterval struct {
	low, high, level float64
	fromObject       bool
}

// parseInterval reads an interval object ({low, high} or {lower, upper},
// with an optional level or confidence) or a list of two numbers.
func parseInterval(raw json.RawMessage) (parsedInterval, bool) {
	// Only a list or an object can be an interval: skip the numbers and
	// strings that make most of a report without decoding them.
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '[' && trimmed[0] != '{' {
		return parsedInterval{}, false
	}
	var pair []float64
	if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
		return parsedInterval{low: pair[0], high: pair[1], level: defaultLevel}, true
	}
	o := decodeObject(raw)
	if o == nil {
		return parsedInterval{}, false
	}
	for _, names := range [][2]string{{"low", "high"}, {"lower", "upper"}} {
		lo, hi := o.num(names[0]), o.num(names[1])
		if lo == nil || hi == nil {
			continue
		}
		iv := parsedInterval{low: *lo, high: *hi, level: defaultLevel, fromObject: true}
		for _, k := range []string{"level", "confidence"} {
			if lv := o.num(k); lv != nil {
				iv.level = asShare(*lv)
			}
		}
		return iv, true
	}
	return parsedInterval{}, false
}

// asShare reads a coverage level given as a share (0.95) or a percentage
// (95).
func asShare(v float64) float64 {
	if v > 1 && v <= 100 {
		return v / 100
	}
	return v
}

// walletQuantities are the names an interval on a report's estimate of
// the wallet's candidates may go by.
var walletQuantities = []string{"", "estimated_wallet", "estimated_wallet_size", "wallet", "wallet_size", "wallet_candidates"}

// intervalTally gathers the intervals of one place and quantity.
type intervalTally struct {
	score    IntervalScore
	binary   bool
	bins     []IntervalBin
	sumLevel float64
	claims   []probClaim // of a binary tally: each claim and its interval
}

// probClaim is a claim with a probability and an interval on it.
type probClaim struct {
	p, low, high float64
	right        bool
	bin          int // its bin among the tally's
}

func (e *evaluator) tally(where string, iv interval, binary bool) *intervalTally {
	key := where + "\x00" + iv.quantity + "\x00" + iv.key
	t := e.intervals[key]
	if t == nil {
		t = &intervalTally{binary: binary, score: IntervalScore{Where: where, Quantity: iv.quantity, Field: iv.key, Nominal: iv.level}}
		if binary {
			for _, b := range bins {
				t.bins = append(t.bins, IntervalBin{Bin: Bin{PLow: b[0], PHigh: b[1]}})
			}
		}
		e.intervals[key] = t
	}
	return t
}

// countIntervals scores intervals on the estimated wallet against its
// truth, and those on the quantities named in other against theirs;
// intervals on other quantities are named as not scored.
func (e *evaluator) countIntervals(where string, ivs []interval, truth int, other map[string]int) {
	for _, iv := range ivs {
		t, ok := other[iv.quantity]
		switch {
		case ok:
		case slices.Contains(walletQuantities, iv.quantity):
			t = truth
			if iv.quantity == "" {
				iv.quantity = "estimated_wallet"
			}
		default:
			e.noteUnscored(where, []string{iv.key + " (an interval on a quantity the labels do not know)"})
			continue
		}
		tl := e.tally(where, iv, false)
		tl.score.IntervalCount++
		tl.sumLevel += iv.level
		if iv.low <= float64(t) && float64(t) <= iv.high {
			tl.score.CoveredCount++
		}
	}
}

// probIntervals scores intervals on a claim's probability, whose truth
// is right or wrong, in the bins of its probability (the interval's
// middle when the claim has none).
func (e *evaluator) probIntervals(where string, ivs []interval, p *float64, right bool) {
	for _, iv := range ivs {
		if iv.quantity != "" && iv.quantity != "probability" {
			e.noteUnscored(where, []string{iv.key + " (an interval on a quantity the labels do not know)"})
			continue
		}
		iv.quantity = "probability"
		t := e.tally(where, iv, true)
		t.score.IntervalCount++
		t.sumLevel += iv.level
		at := (iv.low + iv.high) / 2
		if p != nil {
			at = *p
		}
		for i := range t.bins {
			b := &t.bins[i]
			if at >= b.PLow && (at < b.PHigh || i == len(t.bins)-1) {
				b.add(at, right)
				b.sumLow += iv.low
				b.sumHigh += iv.high
				t.claims = append(t.claims, probClaim{p: at, low: iv.low, high: iv.high, right: right, bin: i})
				break
			}
		}
	}
}

func (t *intervalTally) finish() {
	if t.score.IntervalCount > 0 {
		t.score.Nominal = t.sumLevel / float64(t.score.IntervalCount)
	}
	if !t.binary {
		t.score.Coverage = ratio(t.score.CoveredCount, t.score.IntervalCount)
		return
	}
	for i, c := range holdingClaims(t.claims) {
		if c {
			t.bins[t.claims[i].bin].HoldingCount++
		}
	}
	for i := range t.bins {
		b := &t.bins[i]
		b.finish()
		if b.Count > 0 {
			lo, hi := b.sumLow/float64(b.Count), b.sumHigh/float64(b.Count)
			f := *b.FractionRight
			ok := *b.WilsonLow <= hi && lo <= *b.WilsonHigh || f >= lo-TargetBinSlack && f <= hi+TargetBinSlack
			b.MeanLow, b.MeanHigh, b.Consistent = &lo, &hi, &ok
			b.Holding = ratio(b.HoldingCount, b.Count)
			t.score.HoldingCount += b.HoldingCount
		}
	}
	t.claims = nil
	t.score.Calibration = t.bins
	t.score.Holding = ratio(t.score.HoldingCount, t.score.IntervalCount)
}

// Local rates: the claims are grouped by the log-odds of their
// probability, holdingWidth wide, clamped to ±holdingLimit.
const (
	holdingWidth = 1.0
	holdingLimit = 14.0
)

// holdingClaims reports, for each claim, whether its interval holds the
// rate at which claims like it are right: the fraction right of the
// claims whose probabilities' log-odds lie within the same unit (a range
// of odds e wide), its Wilson interval carried to the claim's own
// probability by the same shift of log-odds. A claim whose probability is
// its group's rate holds it with a point interval whenever the group's
// rate is consistent with its mean probability (95% of groups when the
// claims are calibrated); a probability off its group's rate needs an
// interval that reaches it. Unlike the bins of probability (a bin's rate
// is an average over claims of probabilities far apart, which no claim's
// interval need hold), the groups are narrow enough that a calibrated
// claim's rate is close to its group's.
func holdingClaims(claims []probClaim) []bool {
	type group struct {
		n, right int
		sumP     float64
	}
	groups := map[int]*group{}
	key := func(p float64) int {
		return int(math.Floor(math.Max(-holdingLimit, math.Min(holdingLimit, logit(p))) / holdingWidth))
	}
	for _, c := range claims {
		g := groups[key(c.p)]
		if g == nil {
			g = &group{}
			groups[key(c.p)] = g
		}
		g.n++
		g.sumP += c.p
		if c.right {
			g.right++
		}
	}
	out := make([]bool, len(claims))
	for i, c := range claims {
		g := groups[key(c.p)]
		lo, hi := Wilson(g.right, g.n)
		// A group all right (none right) has a rate interval reaching 1
		// (0), which the formula's rounding may miss by an ulp.
		if g.right == g.n {
			hi = 1
		}
		if g.right == 0 {
			lo = 0
		}
		m := logit(g.sumP / float64(g.n))
		from, to := shiftOdds(c.p, lo, m), shiftOdds(c.p, hi, m)
		out[i] = c.low-1e-12 <= to && from <= c.high+1e-12
	}
	return out
}

// shiftOdds is p with its log-odds moved by those of rate less mean (a
// rate of 0 or 1 gives 0 or 1).
func shiftOdds(p, rate, mean float64) float64 {
	switch {
	case rate <= 0:
		return 0
	case rate >= 1:
		return 1
	}
	return 1 / (1 + math.Exp(-(logit(p) + logit(rate) - mean)))
}

// logit is the log-odds of p, p kept within [1e-12, 1-1e-12].
func logit(p float64) float64 {
	p = math.Max(1e-12, math.Min(1-1e-12, p))
	return math.Log(p / (1 - p))
}
