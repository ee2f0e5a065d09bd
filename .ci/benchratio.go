// Command benchratio reads "go test -bench" output and prints, for every
// benchmark case run as the pair ".../spvfilter" and ".../btcutil", the
// median time of each and the speedup (btcutil time / spvfilter time),
// with allocations per operation. Benchmarks that also report cpu-ns/op
// (the CPU time of the benchmarking thread, which a busy machine disturbs
// much less than wall time) get a second speedup from it; those that
// report ns/element (or cpu-ns/element) show ours per element. Run several
// counts for stable medians:
//
//	go test -run '^$' -bench . -count 6 ./bip37 ./gcs | go run .ci/benchratio.go
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A result line: name-GOMAXPROCS, iterations, then value/unit pairs.
var lineRE = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

type samples struct{ ns, cpu, allocs, perElem, cpuPerElem []float64 }

func main() {
	results := map[string]*samples{} // by full name without -N
	var order []string
	pkg := ""
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p[strings.LastIndex(p, "/")+1:] + "."
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := pkg + strings.TrimPrefix(m[1], "Benchmark")
		s := results[name]
		if s == nil {
			s = &samples{}
			results[name] = s
			order = append(order, name)
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				s.ns = append(s.ns, v)
			case "cpu-ns/op":
				s.cpu = append(s.cpu, v)
			case "allocs/op":
				s.allocs = append(s.allocs, v)
			case "ns/element":
				s.perElem = append(s.perElem, v)
			case "cpu-ns/element":
				s.cpuPerElem = append(s.cpuPerElem, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	fmt.Printf("| case | spvfilter | btcutil | speedup | CPU-time speedup | ours per element | allocs/op (ours / btcutil) | runs |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	pairs := 0
	for _, name := range order {
		base, ok := strings.CutSuffix(name, "/spvfilter")
		if !ok {
			continue
		}
		ours, theirs := results[name], results[base+"/btcutil"]
		if theirs == nil || len(ours.ns) == 0 || len(theirs.ns) == 0 {
			continue
		}
		pairs++
		o, t := median(ours.ns), median(theirs.ns)
		cpu := "–"
		if len(ours.cpu) > 0 && len(theirs.cpu) > 0 {
			cpu = fmt.Sprintf("%.2fx", median(theirs.cpu)/median(ours.cpu))
		}
		perElem := "–"
		switch {
		case len(ours.cpuPerElem) > 0:
			perElem = duration(median(ours.cpuPerElem)) + " CPU"
		case len(ours.perElem) > 0:
			perElem = duration(median(ours.perElem))
		}
		fmt.Printf("| %s | %s | %s | %.2fx | %s | %s | %s / %s | %d |\n", base, duration(o), duration(t), t/o, cpu, perElem,
			num(median(ours.allocs)), num(median(theirs.allocs)), min(len(ours.ns), len(theirs.ns)))
	}
	if pairs == 0 {
		fmt.Fprintln(os.Stderr, "benchratio: no .../spvfilter and .../btcutil pairs in the input")
		os.Exit(1)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
