package attack

import (
	"bufio"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// writeBadUniverse writes n lines of random 20-byte hashes in hex, every
// hundredth of them malformed (the last line too), and returns the number
// of bad lines.
func writeBadUniverse(w io.Writer, n int) (bad int, err error) {
	rng := rand.New(rand.NewPCG(44, 44))
	bw := bufio.NewWriterSize(w, 1<<20)
	var h [20]byte
	var line [41]byte
	line[40] = '\n'
	for i := 0; i < n; i++ {
		if i%100 == 99 || i == n-1 {
			bw.WriteString("this line is not a candidate\n")
			bad++
			continue
		}
		randomBytes(rng, h[:])
		hex.Encode(line[:40], h[:])
		if _, err := bw.Write(line[:]); err != nil {
			return bad, err
		}
	}
	return bad, bw.Flush()
}

// analyzeFile analyzes the universe in file against f and returns the
// report and the candidates (lines) per second.
func analyzeFile(t testing.TB, file string, f *bip37.Filter) (*Report, float64) {
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	start := time.Now()
	r, err := Analyze([]*bip37.Filter{f}, in, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r, float64(r.Universe.LinesRead) / time.Since(start).Seconds()
}

// TestAnalyzeUniverseBadLines analyzes a universe with 1% bad lines, the
// last one among them: every line is read, the bad ones are counted and
// the first ten named, and the speed stays that of a clean universe (the
// bad lines take the parser's slow path). The default size is 10^5 lines;
// SPVFILTER_LONG=1 runs 10^7 (a 410 MB file) and logs the throughput.
func TestAnalyzeUniverseBadLines(t *testing.T) {
	n := 100_000
	if os.Getenv("SPVFILTER_LONG") != "" {
		n = 10_000_000
	}
	file := filepath.Join(t.TempDir(), "universe.txt")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := writeBadUniverse(out, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	f := model.NewWallet(1, 266).Filter(0.0005, 100, 7)
	analyzeFile(t, file, f) // warm the page cache
	r, rate := analyzeFile(t, file, f)
	u := r.Universe
	if u.LinesRead != uint64(n) || u.LinesSkipped != uint64(bad) || u.CandidatesTested != uint64(n-bad) || r.UniverseSize != uint64(n-bad) {
		t.Fatalf("scan %+v, universe %d: want %d lines, %d bad", u, r.UniverseSize, n, bad)
	}
	if len(u.BadLines) != universe.MaxBadLines || u.BadLines[0].Line != 100 || u.BadLines[9].Line != 1000 {
		t.Errorf("bad lines %+v, want lines 100, 200, ... 1000", u.BadLines)
	}
	t.Logf("%d lines, %d bad: %.1f million lines per second", n, bad, rate/1e6)
}

// BenchmarkAnalyzeBadLines compares a clean universe of 10^6 hex lines
// with the same universe where 1% of the lines are malformed.
func BenchmarkAnalyzeBadLines(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	f := model.NewWallet(1, 266).Filter(0.0005, 100, 7)
	clean := filepath.Join(dir, "clean.txt")
	if err := os.WriteFile(clean, benchUniverse(n), 0o644); err != nil {
		b.Fatal(err)
	}
	dirty := filepath.Join(dir, "bad.txt")
	out, err := os.Create(dirty)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := writeBadUniverse(out, n); err != nil {
		b.Fatal(err)
	}
	out.Close()
	for _, c := range []struct{ name, file string }{{"clean", clean}, {"bad1pct", dirty}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				analyzeFile(b, c.file, f)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
