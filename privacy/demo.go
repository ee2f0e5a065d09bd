package privacy

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// DemoOptions describe the built-in demonstration. The defaults mimic a
// fresh bitcoinj wallet: DeterministicKeyChain keeps a lookahead of 100 keys
// plus a threshold of a third (133) on both its external and internal
// chains, 266 keys; its filter holds each key and key hash; FilterMerger
// sizes it for 100 elements more; PeerGroup.DEFAULT_BLOOM_FILTER_FP_RATE is
// 0.00001 (0.0005 in the 2014 versions the ACSAC paper studied); its
// BloomFilter sizes the filter by bitcoinj's rule (model.SizingBitcoinj).
type DemoOptions struct {
	Keys         int     `json:"keys"`
	Used         int     `json:"used"` // wallet addresses that appear on chain, in the universe
	FPRate       float64 `json:"fp_rate"`
	Extra        uint32  `json:"extra_elements"`
	UniverseSize int     `json:"universe_size"` // candidates, the used addresses included
	Filters      int     `json:"filters"`       // filters captured: one per client restart
	Seed         uint64  `json:"seed"`
	// Sizing sizes the filters; the zero value is Core's rule.
	Sizing model.SizingRule `json:"sizing"`
}

// DefaultDemoOptions returns the bitcoinj-like defaults: 266 keys, 20 of
// them used, fp rate 0.00001, bitcoinj's sizing, a universe of a million
// addresses, and two filters (the client restarted once).
func DefaultDemoOptions() DemoOptions {
	return DemoOptions{Keys: 266, Used: 20, FPRate: 0.00001, Extra: 100, UniverseSize: 1_000_000, Filters: 2, Seed: 1, Sizing: model.SizingBitcoinj}
}

// DemoResult is the outcome of the demonstration.
type DemoResult struct {
	Options DemoOptions `json:"options"`
	// Model is the analytic model for the same filter and universe.
	Model  *model.Result  `json:"model"`
	Report *attack.Report `json:"analysis"`
	// UsedFound counts the used addresses among the matches, and
	// UsedConfident those with probability >= 0.95.
	UsedFound     int `json:"used_found"`
	UsedConfident int `json:"used_confident"`
	// Sweep and Curve are the model along the number of keys, for the plot.
	Sweep model.Sweep     `json:"-"`
	Curve []*model.Result `json:"-"`
}

// RunDemo builds the wallet and its filters with bip37, a synthetic universe
// of random P2PKH hashes with the used addresses hidden among them, runs the
// analysis on it as a stream, and evaluates the model for comparison.
func RunDemo(o DemoOptions) (*DemoResult, error) {
	switch {
	case o.Keys < 1 || o.Keys > 100_000:
		return nil, fmt.Errorf("%w: keys %d not in 1..100000", model.ErrBadParams, o.Keys)
	case o.Used < 0 || o.Used > o.Keys:
		return nil, fmt.Errorf("%w: used addresses %d not in 0..%d", model.ErrBadParams, o.Used, o.Keys)
	case o.UniverseSize < o.Used || o.UniverseSize > 100_000_000:
		return nil, fmt.Errorf("%w: universe size %d not in %d..100000000", model.ErrBadParams, o.UniverseSize, o.Used)
	case o.Filters < 1 || o.Filters > attack.MaxFilters:
		return nil, fmt.Errorf("%w: filters %d not in 1..%d", model.ErrBadParams, o.Filters, attack.MaxFilters)
	}
	mp := model.Params{
		Addresses: uint32(o.Keys), FPRate: o.FPRate, ElementsPerAddress: 2, ExtraElements: o.Extra,
		UniverseSize: uint64(o.UniverseSize-o.Used) + uint64(o.Keys), Filters: uint32(o.Filters), Sizing: o.Sizing,
	}
	m, err := model.Evaluate(mp)
	if err != nil {
		return nil, err
	}
	w := model.NewWallet(o.Seed, o.Keys)
	rng := rand.New(rand.NewPCG(o.Seed, 0xde770))
	filters := make([]*bip37.Filter, o.Filters)
	for i := range filters {
		filters[i] = w.FilterWith(o.Sizing, o.FPRate, o.Extra, rng.Uint32()) // a new tweak per restart
	}
	used := w.Addresses(&chaincfg.MainNetParams)[:o.Used]
	// Spread the used addresses over the universe.
	at := make(map[int]string, o.Used)
	for _, a := range used {
		i := rng.IntN(o.UniverseSize)
		for at[i] != "" {
			i = rng.IntN(o.UniverseSize)
		}
		at[i] = a
	}
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		fmt.Fprintf(bw, "# synthetic universe: %d P2PKH hashes, %d of them the wallet's addresses\n", o.UniverseSize, o.Used)
		var h [24]byte // a random hash in its first 20 bytes
		var line [41]byte
		line[40] = '\n'
		urng := rand.New(rand.NewPCG(o.Seed, 0x0417))
		for i := 0; i < o.UniverseSize; i++ {
			if a := at[i]; a != "" {
				bw.WriteString(a + "\n")
				continue
			}
			for j := 0; j < len(h); j += 8 {
				binary.LittleEndian.PutUint64(h[j:], urng.Uint64())
			}
			hex.Encode(line[:40], h[:20])
			if _, err := bw.Write(line[:]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	rep, err := attack.Analyze(filters, pr, attack.AnalyzeOptions{})
	pr.Close()
	if err != nil {
		return nil, err
	}
	res := &DemoResult{Options: o, Model: m, Report: rep}
	isUsed := make(map[string]bool, len(used))
	for _, a := range used {
		isUsed[a] = true
	}
	for _, m := range rep.Matched {
		if isUsed[m.Candidate] {
			res.UsedFound++
			if m.Probability >= 0.95 {
				res.UsedConfident++
			}
		}
	}
	// The curve runs the model along the wallet size up to twice the
	// demonstration's, over the universe as given (the model counts the
	// wallet inside it), and never past the universe's size.
	curve := mp
	if uint64(o.UniverseSize) >= uint64(o.Keys) {
		curve.UniverseSize = uint64(o.UniverseSize)
	}
	hi := min(2*o.Keys, int(curve.UniverseSize))
	res.Sweep, err = model.ParseSweep(fmt.Sprintf("addresses=1..%d:%d", hi, max(1, hi/100)))
	if err != nil {
		return nil, err
	}
	res.Curve, err = res.Sweep.Run(curve)
	if err != nil {
		return nil, err
	}
	return res, nil
}
