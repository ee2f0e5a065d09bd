package plot

import (
	"fmt"
	"io"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// MaxJCurves bounds the curves of one P_h(j) plot, so that the legend
// stays readable.
const MaxJCurves = 20

// jAxis is the x axis of a P_h(j) plot.
var jAxis = axis{label: "addresses named j (picked at random among the matching ones)"}

// SaveJ draws P_h(j) against j, the number of the wallet's addresses the
// attacker names, into file, whose extension picks the format: the papers'
// P_h(j) = C(N, j)/C(N+S, j) at the expected false positives S in the upper
// panel, its average over the binomial number of false positives in the
// lower one. With the zero Sweep, results holds one model and each number
// of intersected filters is a curve; with a sweep, each swept value is a
// curve, after all its filters. At most MaxJCurves curves are drawn.
func SaveJ(file string, s model.Sweep, results []*model.Result) error {
	return saveWith(file, func(w io.Writer, format string) error { return writeJ(w, format, s, results) })
}

// writeJ draws the P_h(j) plot of SaveJ to w in format.
func writeJ(w io.Writer, format string, s model.Sweep, results []*model.Result) error {
	top, bottom, legend, rows, err := jPanels(s, results)
	if err != nil {
		return err
	}
	return render(w, format, top, bottom, legend, rows)
}

// jPanels builds the two panels of a P_h(j) plot and their legend.
func jPanels(s model.Sweep, results []*model.Result) (top, bottom *gonum.Plot, legend gonum.Legend, rows int, err error) {
	at, exact, names, err := jCurves(s, results)
	if err != nil {
		return nil, nil, legend, 0, err
	}
	legend = newLegend()
	head := "BIP 37 filter privacy (analytic model): naming j of the wallet's addresses\n" + fixedParams(results[0].Params, s.Var)
	top, err = newPanel(head+"\nP_h(j) = C(N, j)/C(N+S, j) at the expected false positives S (the papers' formula)", jAxis, "P_h(j)", at, names, &legend)
	if err == nil {
		bottom, err = newPanel("E[P_h(j)]: P_h(j) averaged over the binomial number of false positives", jAxis, "E[P_h(j)]", exact, nil, nil)
	}
	if err != nil {
		return nil, nil, legend, 0, fmt.Errorf("%w: %w", ErrCannotDraw, err)
	}
	return top, bottom, legend, len(names), nil
}

// jCurves returns the P_h(j) curves at S and in expectation, and their
// names: one per number of filters of a single model, or one per swept
// value after all of its filters.
func jCurves(s model.Sweep, results []*model.Result) (at, exact []sweepSeries, names []string, err error) {
	type curve struct {
		name   string
		points []model.PHj
	}
	var curves []curve
	switch {
	case len(results) == 0:
		return nil, nil, nil, fmt.Errorf("%w: no model to draw", ErrCannotDraw)
	case s.Var == "" && len(results) != 1:
		return nil, nil, nil, fmt.Errorf("%w: %d models without a sweep", ErrCannotDraw, len(results))
	case s.Var == "" && results[0].Params.Filters > MaxJCurves:
		return nil, nil, nil, fmt.Errorf("%w: %d filters: at most %d curves of P_h(j)", ErrCannotDraw, results[0].Params.Filters, MaxJCurves)
	case len(results) > MaxJCurves:
		return nil, nil, nil, fmt.Errorf("%w: %d models: at most %d curves of P_h(j)", ErrCannotDraw, len(results), MaxJCurves)
	case s.Var == "":
		r := results[0]
		for b := uint32(1); b <= r.Params.Filters; b++ {
			name := "after 1 filter"
			if b > 1 {
				name = fmt.Sprintf("after %d filters intersected", b)
			}
			curves = append(curves, curve{name, r.PHCurve(b)})
		}
	default:
		for i, r := range results {
			curves = append(curves, curve{sweptName(s.Var, s.Values[i]), r.PHCurve(0)})
		}
	}
	for _, c := range curves {
		a, e := sweepSeries{}, sweepSeries{}
		for _, pt := range c.points {
			a.xys = append(a.xys, plotter.XY{X: float64(pt.J), Y: pt.PH})
			e.xys = append(e.xys, plotter.XY{X: float64(pt.J), Y: pt.PHExact})
		}
		at, exact, names = append(at, a), append(exact, e), append(names, c.name)
	}
	return at, exact, names, nil
}

// sweptName names the curve of one swept value.
func sweptName(v string, x float64) string {
	switch v {
	case "addresses":
		return fmt.Sprintf("N=%g addresses", x)
	case "fprate":
		return fmt.Sprintf("fp rate %g", x)
	case "filters":
		return fmt.Sprintf("after %g filters intersected", x)
	}
	return fmt.Sprintf("|U|=%g", x)
}
