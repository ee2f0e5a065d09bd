package leak_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestBloomEqualsAnalyze: the P_h a client gives for the filters it sent
// lies within the interval privacy analyze gives on the same filters and
// a universe of that size holding the wallet's addresses, and its chance
// matches are analyze's but for the wallet's own candidates, for one
// filter and for a reload (two hashings joined).
func TestBloomEqualsAnalyze(t *testing.T) {
	params := &chaincfg.MainNetParams
	rng := rand.New(rand.NewPCG(5, 6))
	addr := func() (string, []byte) {
		h := make([]byte, 20)
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		a, err := btcutil.NewAddressPubKeyHash(h, params)
		if err != nil {
			t.Fatal(err)
		}
		return a.EncodeAddress(), h
	}
	const n, u = 20, 200_000
	var lines []string
	var wallet [][]byte
	for range n {
		s, h := addr()
		lines = append(lines, s)
		wallet = append(wallet, h)
	}
	for len(lines) < u {
		s, _ := addr()
		lines = append(lines, s)
	}
	universe := strings.Join(lines, "\n") + "\n"
	filter := func(rate float64, tweak uint32) *bip37.Filter {
		f := bip37.NewFilter(n, rate, tweak, wire.BloomUpdateNone)
		for _, h := range wallet {
			f.Add(h)
		}
		return f
	}
	for _, c := range []struct {
		name    string
		filters []*bip37.Filter
	}{
		{"one filter", []*bip37.Filter{filter(0.0005, 1)}},
		{"a reload", []*bip37.Filter{filter(0.002, 1), filter(0.004, 2)}},
	} {
		r, err := attack.Analyze(c.filters, strings.NewReader(universe), attack.AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := leak.Bloom(c.filters, n, u)
		s := r.ExpectedFalsePositives
		// Analyze's S counts the wallet's candidates too; P_h(1) over its
		// interval of the wallet's size, with the client's S.
		x := b.ExpectedFalsePositives
		lo, hi := r.EstimatedWalletLow/(r.EstimatedWalletLow+x)-1e-9, r.EstimatedWalletHigh/(r.EstimatedWalletHigh+x)+1e-9
		t.Logf("%s: P_h(1) %.4f, analyze %.4f (%.4f..%.4f); S %.2f, analyze %.2f", c.name, b.PH1, r.PH1, lo, hi, b.ExpectedFalsePositives, s)
		if b.PH1 < lo || b.PH1 > hi || b.Filters != len(c.filters) || b.UniverseSize != u {
			t.Errorf("%s: P_h(1) %.4f outside analyze's %.4f..%.4f (%+v)", c.name, b.PH1, lo, hi, b)
		}
		if d := b.ExpectedFalsePositives - s*float64(u-n)/float64(u); d*d > 1e-12*s*s {
			t.Errorf("%s: S %g, analyze's %g over %d candidates", c.name, b.ExpectedFalsePositives, s, u)
		}
		if b.PHAll <= 0 || b.PHAll > b.PH1 {
			t.Errorf("%s: P_h(N) %g", c.name, b.PHAll)
		}
	}
	if d := leak.Bloom(nil, 3, 0); d.UniverseSize == 0 || d.PH1 != 3/(3+float64(d.UniverseSize-3)) {
		t.Errorf("no filter: %+v", d)
	}
}
