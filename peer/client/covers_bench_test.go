package client

import (
	"os"
	"testing"
	"time"
)

// BenchmarkCoverScan measures what covers cost a scan in CPU, side by
// side with the same scan without a target, in one run: a session of
// the labelled chain through two relays, its headers and filters held
// in its data directory, with the client's CPU time (the process's,
// user and system: btcd runs apart) per scan as cpu-ms/scan. "covers
// in use" scans with covers that meet the target already (planning
// profiles them and finds nothing short); "drawing" from a data
// directory whose reserve holds the candidates a first scan found and
// no cover yet (planning draws every chain, and settles each on the
// blocks fetched). Their ratio to "no target" is the planning's price:
//
//	go test ./peer/client -run '^$' -bench BenchmarkCoverScan -benchtime 20x
func BenchmarkCoverScan(b *testing.B) {
	f := needCovers(b)
	relays := relaysTo(b, f, 2)
	plain := b.TempDir()
	if _, err := (coverRun{dir: plain}).scan(b, f, relays); err != nil {
		b.Fatal(err)
	}
	// A data directory whose reserve holds a first scan's candidates.
	reserved := b.TempDir()
	if _, err := (coverRun{dir: reserved, target: 0.5}).scan(b, f, relays); !isShort(err) {
		b.Fatalf("a first covered scan: %v, want it short of covers", err)
	}
	inUse := b.TempDir()
	if err := os.CopyFS(inUse, os.DirFS(reserved)); err != nil {
		b.Fatal(err)
	}
	if res, err := (coverRun{dir: inUse, target: 0.5}).scan(b, f, relays); err != nil || !res.Cover.Met {
		b.Fatalf("a second covered scan: %v, want the target met", err)
	}
	for _, bc := range []struct {
		name   string
		dir    func(b *testing.B) string
		target float64
		drawn  bool
	}{
		{"no target", func(*testing.B) string { return plain }, 0, false},
		{"covers in use", func(*testing.B) string { return inUse }, 0.5, false},
		{"drawing", func(b *testing.B) string {
			d := b.TempDir()
			if err := os.CopyFS(d, os.DirFS(reserved)); err != nil {
				b.Fatal(err)
			}
			return d
		}, 0.5, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu int64
			var wall time.Duration
			for b.Loop() {
				b.StopTimer()
				dir := bc.dir(b)
				b.StartTimer()
				began, c0 := time.Now(), cpuTime()
				res, err := (coverRun{dir: dir, target: bc.target}).scan(b, f, relays)
				cpu, wall = cpu+cpuTime()-c0, wall+time.Since(began)
				if err != nil {
					b.Fatal(err)
				}
				if bc.target > 0 && (!res.Cover.Met || (res.Cover.Drawn > 0) != bc.drawn) {
					b.Fatalf("%s: %s", bc.name, res.Cover)
				}
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/scan")
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/scan")
		})
	}
}
