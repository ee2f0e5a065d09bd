package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// sweepItem is one item of a --sweep list, as model.ParseSweep reads it:
// a number, or a range with an additive or geometric step (1 when none
// is given).
type sweepItem struct {
	lo, hi          string // the range's ends as given
	start, end, inc float64
	geometric       bool
	isRange         bool
}

// parseSweepItem reads item's shape; ok is false for what ParseSweep
// refuses for another reason than its length.
func parseSweepItem(item string) (it sweepItem, ok bool) {
	lo, rest, isRange := strings.Cut(item, "..")
	if !isRange {
		_, err := strconv.ParseFloat(strings.TrimSpace(item), 64)
		return sweepItem{}, err == nil
	}
	hi, step, hasStep := strings.Cut(rest, ":")
	it = sweepItem{lo: strings.TrimSpace(lo), hi: strings.TrimSpace(hi), inc: 1, isRange: true}
	var err1, err2, err3 error
	it.start, err1 = strconv.ParseFloat(it.lo, 64)
	it.end, err2 = strconv.ParseFloat(it.hi, 64)
	if hasStep {
		step = strings.TrimSpace(step)
		step, it.geometric = strings.CutPrefix(step, "x")
		it.inc, err3 = strconv.ParseFloat(strings.TrimSpace(step), 64)
	}
	finite := !math.IsInf(it.start, 0) && !math.IsInf(it.end, 0) && !math.IsInf(it.inc, 0)
	ok = err1 == nil && err2 == nil && err3 == nil && finite && it.end >= it.start &&
		(it.geometric && it.inc > 1 && it.start > 0 || !it.geometric && it.inc > 0)
	return it, ok
}

// count is how many values the item gives, as ParseSweep steps it.
func (it sweepItem) count() float64 {
	if !it.isRange {
		return 1
	}
	end := it.end + 1e-9*math.Max(math.Abs(it.end), 1)
	if it.geometric {
		return math.Floor(math.Log(end/it.start)/math.Log(it.inc)) + 1
	}
	return math.Floor((end-it.start)/it.inc) + 1
}

// withStep is the item's text with the step inc.
func (it sweepItem) withStep(inc float64) string {
	x := ""
	if it.geometric {
		x = "x"
	}
	format := byte('g')
	if inc >= 1e-6 && inc < 1e7 {
		format = 'f' // 0.00005, as a step is written, not 5e-05
	}
	return fmt.Sprintf("%s..%s:%s%s", it.lo, it.hi, x, strconv.FormatFloat(inc, format, -1, 64))
}

// niceSteps are the steps 1, 2 and 5 times a power of ten, from the
// smallest not below least on: the steps a suggestion is made of.
func niceSteps(least float64, n int) []float64 {
	k := math.Floor(math.Log10(least))
	var out []float64
	for len(out) < n {
		for _, m := range []int{1, 2, 5} {
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, int(k)), 64)
			if v >= least*(1-1e-12) && len(out) < n {
				out = append(out, v)
			}
		}
		k++
	}
	return out
}

// tooLongSweep says, for a --sweep spec ParseSweep refused, whether it
// was refused for giving more than model.MaxSweepPoints values, and then
// refuses it naming --sweep, the range that gives the most, and a step
// for it with which the sweep fits (checked with ParseSweep). It returns nil for a
// spec refused for another reason, or when no step is found.
func tooLongSweep(spec string) error {
	name, list, ok := strings.Cut(spec, "=")
	if !ok {
		return nil
	}
	items := strings.Split(list, ",")
	parsed := make([]sweepItem, len(items))
	total, widest := 0.0, -1
	for i, text := range items {
		it, ok := parseSweepItem(strings.TrimSpace(text))
		if !ok {
			return nil
		}
		parsed[i] = it
		total += it.count()
		if it.isRange && (widest < 0 || it.count() > parsed[widest].count()) {
			widest = i
		}
	}
	if total <= model.MaxSweepPoints || widest < 0 {
		return nil
	}
	it := parsed[widest]
	budget := model.MaxSweepPoints - (total - it.count())
	if budget < 2 {
		return badInput("--sweep %q: it gives %.0f values, more than the %d a sweep takes: give fewer values", spec, total, model.MaxSweepPoints)
	}
	whole := name == "addresses" || name == "filters" || name == "universe-size" || name == "universe"
	var candidates []float64
	if it.geometric {
		least := math.Pow(it.end/it.start, 1/budget) - 1
		for _, d := range niceSteps(least, 30) {
			f, _ := strconv.ParseFloat(strconv.FormatFloat(1+d, 'g', 12, 64), 64)
			candidates = append(candidates, f)
		}
	} else {
		least := (it.end - it.start) / budget
		if whole {
			least = math.Max(least, 1)
		}
		candidates = niceSteps(least, 30)
	}
	for _, inc := range candidates {
		fixed := slices.Clone(items)
		fixed[widest] = it.withStep(inc)
		s, err := model.ParseSweep(name + "=" + strings.Join(fixed, ","))
		if err != nil {
			continue
		}
		what := fmt.Sprintf("it gives %.0f values", total)
		if len(items) > 1 {
			what = fmt.Sprintf("it gives %.0f values, %.0f of them from the range %s", total, it.count(), strings.TrimSpace(items[widest]))
		}
		return badInput("--sweep %q: %s, more than the %d a sweep takes: give the range a longer step, as %s (%d values in all)",
			spec, what, model.MaxSweepPoints, it.withStep(inc), len(s.Values))
	}
	return nil
}
