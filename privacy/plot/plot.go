package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// ErrCannotDraw reports a plot that cannot be drawn, such as an unknown file
// format.
var ErrCannotDraw = errors.New("privacy: bad plot")

// Format returns the plot format for a file name: "svg" or "png".
func Format(file string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	switch ext {
	case "svg", "png":
		return ext, nil
	}
	return "", fmt.Errorf("%w: %q: file name must end in .svg or .png", ErrCannotDraw, file)
}

// Mark is a point of the swept variable to mark on every curve, such
// as the demonstration's own wallet.
type Mark struct {
	X     float64
	Label string
}

var sweepAxisLabels = map[string]string{
	"addresses":     "wallet addresses N",
	"fprate":        "filter false-positive rate requested (log scale)",
	"filters":       "filters B from the same wallet (different tweaks)",
	"universe-size": "addresses tested by the node |U| (log scale)",
}

// plotFont is a sans-serif face; SVG files embed it, so that no viewer
// substitutes another font.
var plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// sweepSeries is one curve: P_h(1) or P_h(N) after a number of filters.
type sweepSeries struct {
	filters int // filters intersected (0 when the sweep is over filters)
	xys     plotter.XYs
}

// sweepCurves returns the P_h(1) and P_h(N) curves, one per number of
// intersected filters.
func sweepCurves(s model.Sweep, results []*model.Result) (one, all []sweepSeries) {
	maxSteps := 0
	for _, r := range results {
		maxSteps = max(maxSteps, len(r.Steps))
	}
	if s.Var == "filters" {
		maxSteps = 1 // the x axis already counts filters
	}
	for b := 0; b < maxSteps; b++ {
		o, a := sweepSeries{filters: b + 1}, sweepSeries{filters: b + 1}
		if s.Var == "filters" {
			o.filters, a.filters = 0, 0
		}
		for i, r := range results {
			st := r.Steps[len(r.Steps)-1]
			if s.Var != "filters" {
				if b >= len(r.Steps) {
					continue
				}
				st = r.Steps[b]
			}
			if math.IsNaN(st.PH1) || math.IsNaN(st.PHAll) {
				continue
			}
			o.xys = append(o.xys, plotter.XY{X: s.Values[i], Y: st.PH1})
			a.xys = append(a.xys, plotter.XY{X: s.Values[i], Y: st.PHAll})
		}
		if len(o.xys) > 0 {
			one, all = append(one, o), append(all, a)
		}
	}
	return one, all
}

// sweepPanels builds the two panels of a sweep plot, P_h(1) above P_h(N),
// so that the two never hide each other, and the legend they share.
func sweepPanels(s model.Sweep, results []*model.Result, marks []Mark) (top, bottom *gonum.Plot, legend gonum.Legend, rows int, err error) {
	if len(results) == 0 {
		return nil, nil, legend, 0, fmt.Errorf("%w: no points", ErrCannotDraw)
	}
	one, all := sweepCurves(s, results)
	if len(one) == 0 {
		return nil, nil, legend, 0, fmt.Errorf("%w: no point to draw", ErrCannotDraw)
	}
	legend = newLegend()
	names := make([]string, len(one))
	for i, sr := range one {
		names[i] = "after 1 filter"
		switch {
		case sr.filters == 0:
			names[i] = "analytic model, after the filters on the x axis"
		case sr.filters > 1:
			names[i] = fmt.Sprintf("after %d filters intersected", sr.filters)
		}
	}
	axis := axisOf(s.Var)
	head := "BIP 37 filter privacy (analytic model)\n" + fixedParams(results[0].Params, s.Var)
	top, err = newPanel(head+"\nP_h(1): one matching address picked at random is the wallet's", axis, "P_h(1)", one, names, &legend)
	if err == nil {
		bottom, err = newPanel("P_h(N): N matching addresses picked at random are all the wallet's", axis, "P_h(N)", all, nil, nil)
	}
	if err != nil {
		return nil, nil, legend, 0, fmt.Errorf("%w: %w", ErrCannotDraw, err)
	}
	for _, m := range marks {
		for _, p := range []*gonum.Plot{top, bottom} {
			series := one
			if p == bottom {
				series = all
			}
			if err := addMark(p, m, series); err != nil {
				return nil, nil, legend, 0, fmt.Errorf("%w: %w", ErrCannotDraw, err)
			}
		}
		sc, _ := plotter.NewScatter(plotter.XYs{{X: m.X, Y: 0}})
		sc.GlyphStyle = markGlyph()
		sc.GlyphStyle.Radius = legendGlyphRadius
		legend.Add(m.Label, sc)
	}
	return top, bottom, legend, len(names) + len(marks), nil
}

// fixedParams describes the model's parameters other than the one on the
// x axis.
func fixedParams(base model.Params, xvar string) string {
	var fixed []string
	if xvar != "addresses" {
		fixed = append(fixed, fmt.Sprintf("N=%d addresses", base.Addresses))
	}
	if xvar != "fprate" {
		fixed = append(fixed, fmt.Sprintf("fp rate %g", base.FPRate))
	}
	if xvar != "universe-size" {
		fixed = append(fixed, fmt.Sprintf("|U|=%d", base.UniverseSize))
	}
	fixed = append(fixed, fmt.Sprintf("%d elements/address + %d extra", base.ElementsPerAddress, base.ExtraElements))
	if base.Sizing == model.SizingBitcoinj {
		fixed = append(fixed, "bitcoinj sizing")
	}
	if base.PairTest {
		fixed = append(fixed, "pair test")
	}
	return strings.Join(fixed, ", ")
}

// axis is an x axis: its label, and whether it is on a log scale.
type axis struct {
	label string
	log   bool
}

func axisOf(sweepVar string) axis {
	return axis{sweepAxisLabels[sweepVar], sweepVar == "fprate" || sweepVar == "universe-size"}
}

func newLegend() gonum.Legend {
	legend := gonum.NewLegend()
	legend.TextStyle.Font = font.From(plotFont, vg.Points(10))
	legend.Padding = vg.Points(4)
	legend.ThumbnailWidth = vg.Points(36)
	return legend
}

// newPanel draws the series on a panel with a probability on the y axis,
// each with its own colour, dash pattern and marker; with a legend, the
// series are added to it under names.
func newPanel(title string, x axis, ylabel string, series []sweepSeries, names []string, legend *gonum.Legend) (*gonum.Plot, error) {
	p := gonum.New()
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font} {
		f.Typeface, f.Variant = plotFont.Typeface, plotFont.Variant
	}
	p.Title.Text = title
	p.X.Label.Text = x.label
	p.Y.Label.Text = ylabel
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Y.Tick.Marker = fixedTicks{0, 0.25, 0.5, 0.75, 1}
	if x.log {
		p.X.Scale = gonum.LogScale{}
		p.X.Tick.Marker = logTicks{}
	} else {
		p.X.Tick.Marker = linearTicks{integer: true}
	}
	p.Add(plotter.NewGrid())
	for i, sr := range series {
		l, err := plotter.NewLine(sr.xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i)
		// Markers at points offset per curve, so that curves lying on
		// top of one another still show each of them.
		pts := markerPoints(sr.xys, i, len(series))
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: legendGlyphRadius, Shape: plotutil.Shape(i)}
		p.Add(l, sc)
		if legend != nil {
			legend.Add(names[i], l, sc)
		}
	}
	return p, nil
}

// markerPoints picks about eight points of a curve for its markers,
// shifted by the curve's index so that coinciding curves show apart.
func markerPoints(xys plotter.XYs, index, curves int) plotter.XYs {
	const markers = 8
	n := len(xys)
	if n <= markers {
		return xys
	}
	step := float64(n-1) / markers
	var out plotter.XYs
	for k := 0; k < markers; k++ {
		i := int(math.Round((float64(k) + float64(index+1)/float64(curves+1)) * step))
		out = append(out, xys[min(i, n-1)])
	}
	return out
}

// legendGlyphRadius keeps the legend's markers within a row.
const legendGlyphRadius = vg.Length(4)

func markGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
}

// addMark draws a vertical line at m.X, a ring where it crosses each curve
// and the label of the mark.
func addMark(p *gonum.Plot, m Mark, series []sweepSeries) error {
	line, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: 0}, {X: m.X, Y: 1}})
	if err != nil {
		return err
	}
	line.Color = color.Gray{Y: 80}
	line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	var at plotter.XYs
	for _, sr := range series {
		if y, ok := interpolate(sr.xys, m.X); ok {
			at = append(at, plotter.XY{X: m.X, Y: y})
		}
	}
	p.Add(line)
	if len(at) > 0 {
		sc, err := plotter.NewScatter(at)
		if err != nil {
			return err
		}
		sc.GlyphStyle = markGlyph()
		p.Add(sc)
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.X, Y: 0.08}}, Labels: []string{" " + m.Label}})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font = font.From(plotFont, vg.Points(10))
	}
	p.Add(lb)
	return nil
}

// interpolate returns the curve's value at x, linearly between its points.
func interpolate(xys plotter.XYs, x float64) (float64, bool) {
	for i := 1; i < len(xys); i++ {
		a, b := xys[i-1], xys[i]
		if a.X <= x && x <= b.X {
			if b.X == a.X {
				return a.Y, true
			}
			return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X), true
		}
	}
	if len(xys) == 1 && xys[0].X == x {
		return xys[0].Y, true
	}
	return 0, false
}

// fixedTicks labels the given values, all in one format.
type fixedTicks []float64

// Ticks returns the values within [lo, hi].
func (t fixedTicks) Ticks(lo, hi float64) []gonum.Tick {
	var out []gonum.Tick
	for _, v := range t {
		if v >= lo && v <= hi {
			out = append(out, gonum.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	return out
}

// linearTicks labels every tick of a step of 1, 2 or 5 times a power of
// ten, about six of them, in one format; integer keeps the step whole.
type linearTicks struct{ integer bool }

// Ticks returns the ticks within [lo, hi].
func (t linearTicks) Ticks(lo, hi float64) []gonum.Tick {
	if !(hi > lo) {
		return []gonum.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	if t.integer {
		step = math.Max(1, math.Round(step))
	}
	var out []gonum.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, gonum.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		if half := v + step/2; half < hi && (!t.integer || half == math.Trunc(half)) {
			out = append(out, gonum.Tick{Value: half}) // a minor tick
		}
	}
	return out
}

// logTicks labels the powers of ten as 1e-5, 1e-4, ... (one format along
// the axis) with unlabelled ticks between; an axis within one decade gets
// linear ticks instead.
type logTicks struct{}

// Ticks returns the ticks within [lo, hi].
func (logTicks) Ticks(lo, hi float64) []gonum.Tick {
	elo, ehi := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var out []gonum.Tick
	labelled := 0
	for e := elo; e <= ehi; e++ {
		p := math.Pow(10, float64(e))
		for k := 1; k <= 9; k++ {
			v := float64(k) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tk := gonum.Tick{Value: v}
			if k == 1 {
				tk.Label = "1e" + strconv.Itoa(e)
				labelled++
			}
			out = append(out, tk)
		}
	}
	if labelled == 0 {
		return linearTicks{}.Ticks(lo, hi)
	}
	return out
}

// write draws the sweep and writes it to w in format ("svg" or "png"):
// P_h(1) in the upper panel, P_h(N) in the lower one, the legend in a strip
// under them on an opaque background, each mark (such as the wallet of
// the demonstration) as a ring on every curve. SVG files embed their font.
func write(w io.Writer, format string, s model.Sweep, results []*model.Result, marks ...Mark) error {
	top, bottom, legend, rows, err := sweepPanels(s, results, marks)
	if err != nil {
		return err
	}
	return render(w, format, top, bottom, legend, rows)
}

// render lays out two panels, one above the other, and their legend of
// rows entries in a strip under them, and writes the figure to w in format.
func render(w io.Writer, format string, top, bottom *gonum.Plot, legend gonum.Legend, rows int) error {
	width, height := 9*vg.Inch, 9*vg.Inch
	var cw vg.CanvasWriterTo
	switch format {
	case "svg":
		cw = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))}
	default:
		return fmt.Errorf("%w: unknown format %q", ErrCannotDraw, format)
	}
	dc := draw.New(cw)
	// An opaque background for the whole figure: SVG has none of its own.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	rowH := max(legend.TextStyle.Font.Size, 2*legendGlyphRadius) + legend.Padding
	legendH := vg.Length(rows)*rowH + vg.Points(16)
	panelH := (height - legendH) / 2
	// A margin on the right keeps the last tick label and the curves'
	// ends off the image border.
	top.Draw(draw.Crop(dc, 0, -vg.Points(14), legendH+panelH, -vg.Points(6)))
	bottom.Draw(draw.Crop(dc, 0, -vg.Points(14), legendH, -panelH))

	strip := draw.Crop(dc, vg.Points(46), -vg.Points(40), vg.Points(8), -(height - legendH + vg.Points(4)))
	legend.Top, legend.Left = true, true
	box := legend.Rectangle(strip)
	// Rectangle places a left legend at the right (gonum v0.17): keep
	// its size, at the left.
	box.Min.X, box.Max.X = strip.Min.X-vg.Points(6), strip.Min.X+(box.Max.X-box.Min.X)+vg.Points(24)
	box.Min.Y -= vg.Points(4)
	box.Max.Y += vg.Points(4)
	strip.SetColor(color.White)
	strip.Fill(box.Path())
	strip.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.5)})
	strip.Stroke(box.Path())
	legend.Draw(strip)
	if format != "svg" {
		_, err := cw.WriteTo(w)
		return err
	}
	// Viewers that ignore the embedded font fall back to Arial or
	// Helvetica, whose metrics Liberation Sans shares, or to any sans
	// serif: gonum names the family alone.
	var b bytes.Buffer
	if _, err := cw.WriteTo(&b); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")))
	return err
}

// Save draws the sweep into file, whose extension picks the format.
func Save(file string, s model.Sweep, results []*model.Result, marks ...Mark) error {
	return saveWith(file, func(w io.Writer, format string) error { return write(w, format, s, results, marks...) })
}

// saveWith creates file and draws into it in the format its extension
// names.
func saveWith(file string, draw func(io.Writer, string) error) error {
	format, err := Format(file)
	if err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := draw(f, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
