package plot

import (
	"bytes"
	"errors"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestWriteJPlot draws P_h(j) for four wallets at the universe that
// reproduces Gervais et al.'s quoted points, and for one wallet's three
// filters: both panels, a legend entry per curve, an opaque PNG.
func TestWriteJPlot(t *testing.T) {
	s, err := model.ParseSweep("addresses=5,10,15,20")
	if err != nil {
		t.Fatal(err)
	}
	base := model.Params{FPRate: 0.0005, UniverseSize: 32_000_000, ElementsPerAddress: 2, ExtraElements: 100, Filters: 1}
	rs, err := s.Run(base)
	if err != nil {
		t.Fatal(err)
	}
	one := model.DefaultParams()
	one.Addresses, one.Filters, one.FPRate = 50, 3, 0.01
	r, err := model.Evaluate(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s     model.Sweep
		rs    []*model.Result
		wants []string
	}{
		{s, rs, []string{"N=5 addresses", "N=20 addresses", "|U|=32000000", "fp rate 0.0005"}},
		{model.Sweep{}, []*model.Result{r}, []string{"after 1 filter", "after 3 filters intersected", "N=50 addresses"}},
	} {
		var svg bytes.Buffer
		if err := writeJ(&svg, "svg", tc.s, tc.rs); err != nil {
			t.Fatal(err)
		}
		for _, want := range append(tc.wants, "P_h(j) = C(N, j)/C(N+S, j)", "E[P_h(j)]: P_h(j) averaged", "addresses named j", "fill:#FFFFFF") {
			if !strings.Contains(svg.String(), want) {
				t.Errorf("svg lacks %q", want)
			}
		}
		var pb bytes.Buffer
		if err := writeJ(&pb, "png", tc.s, tc.rs); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&pb)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, a := img.At(img.Bounds().Min.X, img.Bounds().Min.Y).RGBA(); a != 0xffff {
			t.Errorf("corner alpha %d", a)
		}
	}
	many, err := model.ParseSweep("addresses=1..30")
	if err != nil {
		t.Fatal(err)
	}
	manyRs, err := many.Run(base)
	if err != nil {
		t.Fatal(err)
	}
	mf := model.DefaultParams()
	mf.Filters = MaxJCurves + 1
	manyFilters, err := model.Evaluate(mf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, bad := range []struct {
		file string
		s    model.Sweep
		rs   []*model.Result
		says string // what the error says, counting only what is beyond the limit
	}{
		{"none.svg", s, nil, "no model to draw"},
		{"two.svg", model.Sweep{}, rs[:2], "2 models without a sweep"},
		{"many.svg", many, manyRs, ": 30 models: at most 20 curves of P_h(j)"},
		{"filters.svg", model.Sweep{}, []*model.Result{manyFilters}, ": 21 filters: at most 20 curves of P_h(j)"},
		{"gervais.gif", s, rs, ""},
	} {
		err := SaveJ(filepath.Join(dir, bad.file), bad.s, bad.rs)
		if !errors.Is(err, ErrCannotDraw) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: %v, want ErrCannotDraw saying %q", bad.file, err, bad.says)
		}
	}
	if err := SaveJ(filepath.Join(dir, "gervais.png"), s, rs); err != nil {
		t.Fatal(err)
	}
}
