package lab

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSavePlot draws a small report as SVG and PNG, and refuses other
// formats and a report without curves.
func TestSavePlot(t *testing.T) {
	rep, err := Run(syntheticBlocks(41, 3, 100, 20_000), Config{Designs: []Design{BasicGCS()}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"lab.svg", "lab.PNG"} {
		file := filepath.Join(dir, name)
		if err := SavePlot(file, rep, "synthetic blocks"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".svg") {
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("cheapest P")) {
				t.Errorf("%s: not an SVG of the plot (%d bytes)", name, len(b))
			}
			continue
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if img.Bounds().Dx() < 500 {
			t.Errorf("%s: %v", name, img.Bounds())
		}
	}
	for _, name := range []string{"lab.pdf", "lab"} {
		if err := SavePlot(filepath.Join(dir, name), rep, ""); !errors.Is(err, ErrPlot) {
			t.Errorf("%s: %v, want ErrPlot", name, err)
		}
	}
	if err := WritePlot(&bytes.Buffer{}, "svg", &Report{}, ""); !errors.Is(err, ErrPlot) {
		t.Errorf("a report without curves: %v, want ErrPlot", err)
	}
}
