package neutrinobench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// warmed names the clients that have had their warm-up scan in this
// process (see warmUp).
var warmed = map[string]bool{}

// warmUp gives cl, unless it had one already in the process, one scan of
// the whole chain that is neither timed nor counted, checked like the
// measured ones. Every client gets the same one, before any client is
// measured, so that none of the measured scans pays for the process's
// heap growing from nothing or for what is set up once per process.
func warmUp(cl client, addrs []string, params *chaincfg.Params, watch [][]byte, want map[chainhash.Hash]bool) error {
	if warmed[cl.name] {
		return nil
	}
	warmed[cl.name] = true
	st, err := cl.scan(context.Background(), addrs, params, watch, 1, -1)
	if err != nil {
		return fmt.Errorf("%s warm-up: %w", cl.name, err)
	}
	st.Release()
	return checkFound(cl.name+" warm-up", st, want)
}

// scanOrder returns the clients in the order this process measures them,
// shuffled once per process and printed, so that over several processes
// no client is always the first or the last measured.
func scanOrder() []client {
	order := make([]client, len(clients))
	names := make([]string, len(clients))
	for i, j := range rand.Perm(len(clients)) {
		order[i], names[i] = clients[j], clients[j].name
	}
	fmt.Printf("clients measured in the order %s\n", strings.Join(names, ", "))
	return order
}

// benchSelected reports whether the -test.bench pattern selects the
// benchmark called name (elements separated by '/'): each element of the
// pattern must match the name's element at the same depth, as in the
// testing package. A pattern it cannot read selects everything.
func benchSelected(name string) bool {
	f := flag.Lookup("test.bench")
	if f == nil {
		return true
	}
	return patternSelects(f.Value.String(), name)
}

// patternSelects reports whether the benchmark pattern selects the
// benchmark called name (see benchSelected).
func patternSelects(pattern, name string) bool {
	elems := strings.Split(name, "/")
	for i, p := range splitPattern(pattern) {
		if i >= len(elems) {
			break
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return true
		}
		if !re.MatchString(elems[i]) {
			return false
		}
	}
	return true
}

// splitPattern splits a -test.bench pattern at the slashes that are
// outside brackets and parentheses and not escaped.
func splitPattern(p string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth = max(depth-1, 0)
		case '/':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

func TestPatternSelects(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"Scan/W1$/(spvfilter|neutrino)$", "BenchmarkScan/W1/spvfilter", true},
		{"Scan/W1$/(spvfilter|neutrino)$", "BenchmarkScan/W1/neutrino", true},
		{"Scan/W1$/(spvfilter|neutrino)$", "BenchmarkScan/W1/neutrino-rescan", false},
		{"Scan/W1$/(spvfilter|neutrino)$", "BenchmarkScan/W100/neutrino", false},
		{"Scan/W1$", "BenchmarkScan/W1/neutrino-rescan", true},
		{"Scan", "BenchmarkScan/W100/spvfilter", true},
		{".", "BenchmarkScan/W1/spvfilter", true},
		{"Follow", "BenchmarkScan/W1/spvfilter", false},
		{"Scan/W1/(a/b|spvfilter)", "BenchmarkScan/W1/spvfilter", true},
		{"Scan/W1/spv[/]filter", "BenchmarkScan/W1/spvfilter", false},
		{"Scan/(", "BenchmarkScan/W1/spvfilter", true},
	} {
		if got := patternSelects(tc.pattern, tc.name); got != tc.want {
			t.Errorf("patternSelects(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestCompareSelection(t *testing.T) {
	for _, tc := range []struct {
		clients, watch string
		names          []string
		watches        []int
		fails          bool
	}{
		{"", "", []string{"spvfilter", "neutrino", "neutrino-rescan"}, []int{1, 100}, false},
		{"^(spvfilter|neutrino)$", "1", []string{"spvfilter", "neutrino"}, []int{1}, false},
		{"rescan", "1, 10,100", []string{"neutrino-rescan"}, []int{1, 10, 100}, false},
		{"^(neutrino|spvfilter-3conns|spvfilter)$", "1", []string{"spvfilter", "spvfilter-3conns", "neutrino"}, []int{1}, false},
		{"conns", "1", []string{"spvfilter-2conns", "spvfilter-3conns"}, []int{1}, false},
		{"nothing", "", nil, nil, true},
		{"(", "", nil, nil, true},
		{"", "0", nil, nil, true},
		{"", "one", nil, nil, true},
	} {
		t.Setenv("SPVFILTER_BENCH_CLIENTS", tc.clients)
		t.Setenv("SPVFILTER_BENCH_WATCH", tc.watch)
		picked, watches, err := compareSelection()
		if (err != nil) != tc.fails {
			t.Errorf("%q %q: error %v", tc.clients, tc.watch, err)
			continue
		}
		var names []string
		for _, cl := range picked {
			names = append(names, cl.name)
		}
		if !slices.Equal(names, tc.names) || !slices.Equal(watches, tc.watches) {
			t.Errorf("%q %q: clients %v, watch lists %v; want %v, %v", tc.clients, tc.watch, names, watches, tc.names, tc.watches)
		}
	}
}

func TestSpread(t *testing.T) {
	c := func(s ...float64) []Cost {
		var out []Cost
		for _, x := range s {
			out = append(out, Cost{Wall: time.Duration(x * float64(time.Second))})
		}
		return out
	}
	if got, want := spread(c(2, 6, 3), c(1, 2, 1)), "3.00x (2.00–3.00)"; got != want {
		t.Errorf("spread = %q, want %q", got, want)
	}
}
