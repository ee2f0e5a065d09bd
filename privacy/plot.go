package privacy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrBadPlot reports a plot that cannot be drawn, such as an unknown file
// format.
var ErrBadPlot = errors.New("privacy: bad plot")

// PlotFormat returns the plot format for a file name: "svg" or "png".
func PlotFormat(file string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	switch ext {
	case "svg", "png":
		return ext, nil
	}
	return "", fmt.Errorf("%w: %q: file name must end in .svg or .png", ErrBadPlot, file)
}

var sweepAxisLabels = map[string]string{
	"addresses":     "wallet addresses N",
	"fprate":        "filter false-positive rate requested (log scale)",
	"filters":       "filters B from the same wallet (different tweaks)",
	"universe-size": "addresses tested by the node |U| (log scale)",
}

// NewSweepPlot draws P_h(1) and P_h(N) against the swept parameter, one
// pair of curves per number of intersected filters, with a title naming the
// fixed parameters.
func NewSweepPlot(s Sweep, results []*ModelResult) (*plot.Plot, error) {
	p, _, err := newSweepPlot(s, results)
	return p, err
}

// newSweepPlot also returns the number of legend entries.
func newSweepPlot(s Sweep, results []*ModelResult) (*plot.Plot, int, error) {
	if len(results) == 0 {
		return nil, 0, fmt.Errorf("%w: no points", ErrBadPlot)
	}
	rows := 0
	base := results[0].Params
	p := plot.New()
	var fixed []string
	if s.Var != "addresses" {
		fixed = append(fixed, fmt.Sprintf("N=%d addresses", base.Addresses))
	}
	if s.Var != "fprate" {
		fixed = append(fixed, fmt.Sprintf("fp rate %g", base.FPRate))
	}
	if s.Var != "universe-size" {
		fixed = append(fixed, fmt.Sprintf("|U|=%d", base.UniverseSize))
	}
	fixed = append(fixed, fmt.Sprintf("%d elements/address + %d extra", base.ElementsPerAddress, base.ExtraElements))
	if base.PairTest {
		fixed = append(fixed, "pair test")
	}
	p.Title.Text = "BIP 37 filter privacy (analytic model): probability that matches belong to the wallet\n" + strings.Join(fixed, ", ")
	p.X.Label.Text = sweepAxisLabels[s.Var]
	p.Y.Label.Text = "probability (1 = wallet fully exposed)"
	p.Y.Min, p.Y.Max = 0, 1.02
	if s.Var == "fprate" || s.Var == "universe-size" {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	p.X.Tick.Marker = plainTicks{p.X.Tick.Marker}
	p.Add(plotter.NewGrid())

	maxSteps := 0
	for _, r := range results {
		maxSteps = max(maxSteps, len(r.Steps))
	}
	if s.Var == "filters" {
		maxSteps = 1 // the x axis already counts filters
	}
	for b := 0; b < maxSteps; b++ {
		var one, all plotter.XYs
		for i, r := range results {
			st := r.Steps[len(r.Steps)-1]
			if s.Var != "filters" {
				if b >= len(r.Steps) {
					continue
				}
				st = r.Steps[b]
			}
			x := s.Values[i]
			if math.IsNaN(st.PH1) || math.IsNaN(st.PHAll) {
				continue
			}
			one = append(one, plotter.XY{X: x, Y: st.PH1})
			all = append(all, plotter.XY{X: x, Y: st.PHAll})
		}
		suffix := ""
		if s.Var != "filters" && maxSteps > 1 {
			suffix = fmt.Sprintf(" - %d filter(s) intersected", b+1)
		}
		for j, series := range []struct {
			name string
			xys  plotter.XYs
		}{
			{"P_h(1): one matching address picked at random is the wallet's" + suffix, one},
			{"P_h(N): N matching addresses picked at random are all the wallet's" + suffix, all},
		} {
			if len(series.xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(series.xys)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: %v", ErrBadPlot, err)
			}
			rows++
			l.Color = plotutil.Color(b)
			l.Width = vg.Points(1.5)
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(l)
			p.Legend.Add(series.name, l)
		}
	}
	return p, rows, nil
}

// plainTicks labels ticks with %g, so that counts show as 25, not 25.00.
type plainTicks struct{ plot.Ticker }

// Ticks relabels the wrapped ticker's ticks.
func (t plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.Ticker.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}

// WritePlot draws the sweep and writes it to w in format ("svg" or "png").
func WritePlot(w io.Writer, format string, s Sweep, results []*ModelResult) error {
	p, rows, err := newSweepPlot(s, results)
	if err != nil {
		return err
	}
	// The legend goes in a strip under the plot, where it hides no curve.
	width, height := 9*vg.Inch, 6*vg.Inch
	rowH := p.Legend.TextStyle.Font.Size + p.Legend.Padding + vg.Points(2)
	legendH := vg.Length(rows)*rowH + vg.Points(12)
	cw, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadPlot, err)
	}
	dc := draw.New(cw)
	legend := p.Legend
	p.Legend = plot.NewLegend() // drawn below instead
	// A margin on the right keeps the last tick label and the curves'
	// ends off the image border.
	p.Draw(draw.Crop(dc, 0, -vg.Points(14), legendH, 0))
	legend.Draw(draw.Crop(dc, vg.Points(40), 0, vg.Points(6), -(height - legendH)))
	_, err = cw.WriteTo(w)
	return err
}

// SavePlot draws the sweep into file, whose extension picks the format.
func SavePlot(file string, s Sweep, results []*ModelResult) error {
	format, err := PlotFormat(file)
	if err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := WritePlot(f, format, s, results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
