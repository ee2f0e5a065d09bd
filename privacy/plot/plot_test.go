package plot

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gonum "gonum.org/v1/plot"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestWritePlotReadable checks what makes a plot readable: an opaque white
// background (the PNG's corners and legend strip, the SVG's fill), P_h(1)
// and P_h(N) in two panels, the mark on the curves and in the legend, one
// tick format per axis, and a font every viewer has.
func TestWritePlotReadable(t *testing.T) {
	s, rs := sweep(t, "addresses=1..300:10")
	mark := Mark{X: 150, Label: "this wallet: 150 keys"}
	var svg bytes.Buffer
	if err := write(&svg, "svg", s, rs, mark); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"@font-face", "sans-serif", "P_h(1): one matching address", "P_h(N): N matching addresses",
		"this wallet: 150 keys", "after 2 filters intersected", "fill:#FFFFFF"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if n := strings.Count(svg.String(), "this wallet: 150 keys"); n != 3 {
		t.Errorf("mark labelled %d times, want on both panels and in the legend", n)
	}
	var pb bytes.Buffer
	if err := write(&pb, "png", s, rs, mark); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pb)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for _, p := range [][2]int{{b.Min.X, b.Min.Y}, {b.Max.X - 1, b.Max.Y - 1}, {b.Max.X - 5, b.Max.Y - 20}} {
		r, g, bl, a := img.At(p[0], p[1]).RGBA()
		if a != 0xffff || r != 0xffff || g != 0xffff || bl != 0xffff {
			t.Errorf("pixel %v: %d %d %d alpha %d, want opaque white", p, r, g, bl, a)
		}
	}
}

func TestPlotTicks(t *testing.T) {
	labels := func(ts []gonum.Tick, all bool) string {
		var out []string
		for _, tk := range ts {
			if all || tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		ticks []gonum.Tick
		all   bool // minor ticks too
		want  string
	}{
		{(logTicks{}).Ticks(1e-5, 0.1), false, "1e-5 1e-4 1e-3 1e-2 1e-1"},
		{(logTicks{}).Ticks(1e5, 1e7), false, "1e5 1e6 1e7"},
		{(linearTicks{integer: true}).Ticks(1, 532), false, "100 200 300 400 500"},
		{(linearTicks{integer: true}).Ticks(1, 3), true, "1 2 3"},
		{fixedTicks{0, 0.5, 1}.Ticks(0, 1.02), true, "0 0.5 1"},
	} {
		if got := labels(tt.ticks, tt.all); got != tt.want {
			t.Errorf("ticks %q, want %q", got, tt.want)
		}
	}
}

func TestSweepRunAndPlot(t *testing.T) {
	s, rs := sweep(t, "addresses=1..50")
	if len(rs) != 50 || rs[9].Params.Addresses != 10 {
		t.Fatalf("%d results", len(rs))
	}
	// More addresses fill the filter more: P_h(1) falls.
	if !(rs[0].Steps[0].PH1 > rs[49].Steps[0].PH1) {
		t.Errorf("P_h(1) does not fall with N: %g, %g", rs[0].Steps[0].PH1, rs[49].Steps[0].PH1)
	}
	dir := t.TempDir()
	for _, name := range []string{"leak.svg", "leak.png"} {
		file := filepath.Join(dir, name)
		if err := Save(file, s, rs); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".svg") {
			for _, want := range []string{"<svg", "wallet addresses N", "P_h(1)", "BIP 37 filter privacy"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("svg lacks %q", want)
				}
			}
		} else if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("not a PNG")
		}
	}
	if err := Save(filepath.Join(dir, "leak.gif"), s, rs); !errors.Is(err, ErrCannotDraw) {
		t.Errorf("gif: %v", err)
	}
}

// sweep runs the model with two filters along spec.
func sweep(t *testing.T, spec string) (model.Sweep, []*model.Result) {
	t.Helper()
	s, err := model.ParseSweep(spec)
	if err != nil {
		t.Fatal(err)
	}
	base := model.DefaultParams()
	base.Filters = 2
	rs, err := s.Run(base)
	if err != nil {
		t.Fatal(err)
	}
	return s, rs
}
