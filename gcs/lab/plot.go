package lab

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrPlot reports a plot that cannot be drawn: a file name of an unknown
// format, or a report without cost curves.
var ErrPlot = errors.New("lab: cannot draw the plot")

// PlotFormat returns the format a plot file's name asks for: "svg" or
// "png".
func PlotFormat(file string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	if ext == "svg" || ext == "png" {
		return ext, nil
	}
	return "", fmt.Errorf("%w: %q: the file name must end in .svg or .png", ErrPlot, file)
}

// SavePlot draws rep's cost curves into file (.svg or .png): above, the
// bytes a client pays per block against its wallet size, for BIP 158's
// P = 19 and each family's cheapest variant; below, the cheapest P. The
// title names the chain (source).
func SavePlot(file string, rep *Report, source string) error {
	format, err := PlotFormat(file)
	if err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := WritePlot(f, format, rep, source); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WritePlot draws the plot of SavePlot to w in format ("svg" or "png").
func WritePlot(w io.Writer, format string, rep *Report, source string) error {
	if len(rep.Curve) == 0 {
		return fmt.Errorf("%w: the report has no cost curves", ErrPlot)
	}
	top, err := costPanel(rep, source)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPlot, err)
	}
	bottom, err := bestPPanel(rep)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPlot, err)
	}
	width, height := 9*vg.Inch, 9*vg.Inch
	var cw vg.CanvasWriterTo
	switch format {
	case "svg":
		cw = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))}
	default:
		return fmt.Errorf("%w: unknown format %q", ErrPlot, format)
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top.Draw(draw.Crop(dc, 0, -vg.Points(12), height*0.38, -vg.Points(6)))
	bottom.Draw(draw.Crop(dc, 0, -vg.Points(12), 0, -height*0.62-vg.Points(6)))
	_, err = cw.WriteTo(w)
	return err
}

// costPanel draws the bytes per block against the wallet size.
func costPanel(rep *Report, source string) (*gonum.Plot, error) {
	p := gonum.New()
	p.Title.Text = fmt.Sprintf("What a light client pays per block: its filter, and the block when the filter\nmatches by a false positive (%s: %d blocks, %d elements)", source, rep.Blocks, rep.Elements)
	p.X.Label.Text = "wallet size W (scripts watched, log scale)"
	p.Y.Label.Text = "bytes per block (log scale)"
	p.X.Scale, p.Y.Scale = gonum.LogScale{}, gonum.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = gonum.LogTicks{Prec: -1}, gonum.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	type curve struct {
		name string
		y    func(CostRow) float64
	}
	curves := []curve{{"gcs P=19 (BIP 158)", func(r CostRow) float64 { return r.BasicBytes }}}
	for i, c := range rep.Curve[0].Best {
		curves = append(curves, curve{c.Name + ", cheapest variant", func(r CostRow) float64 { return r.Best[i].BytesPerBlock }})
	}
	for i, c := range curves {
		xys := make(plotter.XYs, len(rep.Curve))
		for j, r := range rep.Curve {
			xys[j].X, xys[j].Y = float64(r.Watched), c.y(r)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes, l.Width = plotutil.Color(i), plotutil.Dashes(i), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.name, l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// bestPPanel draws the cheapest P against the wallet size, with P = 19.
func bestPPanel(rep *Report) (*gonum.Plot, error) {
	p := gonum.New()
	p.Title.Text = fmt.Sprintf("The cheapest P of the sweep (M = %.6f·2^P)", BasicSweepFactor)
	p.X.Label.Text = "wallet size W (scripts watched, log scale)"
	p.Y.Label.Text = "P"
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = gonum.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	best := make(plotter.XYs, len(rep.Curve))
	basic := make(plotter.XYs, len(rep.Curve))
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, r := range rep.Curve {
		best[j].X, best[j].Y = float64(r.Watched), float64(r.BestP)
		basic[j].X, basic[j].Y = float64(r.Watched), 19
		lo, hi = math.Min(lo, float64(r.BestP)), math.Max(hi, float64(r.BestP))
	}
	p.Y.Min, p.Y.Max = math.Min(lo, 19)-1, math.Max(hi, 19)+1
	l, err := plotter.NewLine(best)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = plotutil.Color(1), vg.Points(1.5)
	sc, err := plotter.NewScatter(best)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	b, err := plotter.NewLine(basic)
	if err != nil {
		return nil, err
	}
	b.Color, b.Dashes, b.Width = plotutil.Color(0), plotutil.Dashes(2), vg.Points(1.5)
	p.Add(l, sc, b)
	p.Legend.Add("cheapest P", l, sc)
	p.Legend.Add("P = 19 (BIP 158)", b)
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}
