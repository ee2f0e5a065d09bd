package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// p2pkh is a P2PKH script of a key hash of name, for watch lists.
func p2pkh(name string) []byte {
	s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).
		AddData(btcutil.Hash160([]byte(name))).AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG).Script()
	if err != nil {
		panic(err)
	}
	return s
}

// TestBIP37ShapeMatchesClientFilter: the model, fed the shape of a watch
// list, sizes the filter the client builds for it, to the byte and hash
// function, and counts its elements.
func TestBIP37ShapeMatchesClientFilter(t *testing.T) {
	multisig, err := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(make([]byte, 33)).AddData(append(make([]byte, 32), 1)).
		AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	if err != nil {
		t.Fatal(err)
	}
	scripts := func(names ...string) []client.WatchItem {
		var w []client.WatchItem
		for _, n := range names {
			w = append(w, client.ScriptItem(p2pkh(n)))
		}
		return w
	}
	tests := []struct {
		name         string
		watch        []client.WatchItem
		scripts, per uint32
		inserted     uint64
		sizing       uint32
		rates        []float64
	}{
		{"one script", scripts("a"), 1, 51, 1, 51, []float64{1e-9, 0.0001, 0.01, 0.3}},
		{"twenty scripts", scripts("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"), 20, 51, 20, 1020, []float64{1e-6, 0.0001, 0.05}},
		{"a script and an outpoint", append(scripts("a"), client.OutPointItem(wire.OutPoint{Index: 3}, nil)), 1, 102, 2, 102, []float64{0.0001, 0.02}},
		{"bare multisig, two pushes", []client.WatchItem{client.ScriptItem(multisig), client.ScriptItem(p2pkh("a"))}, 2, 51, 3, 103, []float64{0.0001}},
		{"outpoints only", []client.WatchItem{client.OutPointItem(wire.OutPoint{Index: 1}, nil)}, 0, 0, 1, 51, []float64{0.0001}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newBIP37Shape(tt.watch)
			if s.scripts != tt.scripts || s.perScript != tt.per || s.inserted != tt.inserted || s.sizing != tt.sizing {
				t.Fatalf("shape %+v, want scripts %d per %d inserted %d sizing %d", s, tt.scripts, tt.per, tt.inserted, tt.sizing)
			}
			// The model inserts the filled filter's count, but for
			// fewer than one per script.
			if s.scripts > 0 && s.sizing-s.scripts*s.perScript >= s.scripts {
				t.Errorf("model inserts %d·%d of %d", s.scripts, s.perScript, s.sizing)
			}
			for _, x := range ratesBySizing(tt.rates) {
				rule, rate := x.rule, x.rate
				f, err := client.NewWatchFilter(tt.watch, rule, rate, 7, wire.BloomUpdateAll)
				if err != nil {
					t.Fatal(err)
				}
				st := f.Stats()
				bytes, k := rule.Size(s.sizing, rate)
				if bytes != st.SizeBytes || k != st.HashFuncs {
					t.Errorf("%s, rate %v: model sizes %d bytes %d functions, the client built %d, %d", rule, rate, bytes, k, st.SizeBytes, st.HashFuncs)
				}
				if s.scripts == 0 {
					continue
				}
				r, err := model.Evaluate(s.params(rule, rate, 1_000_000, 1))
				if err != nil {
					t.Fatal(err)
				}
				if r.FilterBytes != st.SizeBytes || r.HashFuncs != st.HashFuncs {
					t.Errorf("rate %v: Evaluate sizes %d bytes %d functions, the client %d, %d", rate, r.FilterBytes, r.HashFuncs, st.SizeBytes, st.HashFuncs)
				}
				// The filled filter matches, from its bits, as the
				// model's, within the binomial noise of its bits.
				if lo, hi := bitRateInterval(st, r.Pf); st.FalsePositiveRate < lo || st.FalsePositiveRate > hi {
					t.Errorf("%s, rate %v: the filter matches at %.3g from its bits, the model at %.3g, outside [%.3g, %.3g]", rule, rate, st.FalsePositiveRate, r.Pf, lo, hi)
				}
			}
		})
	}
}

// bitRateInterval is the range, at four standard deviations of its bits
// set (binomial), of the rate from its bits a filter shaped as st shows
// when each bit is set with the chance that gives rate.
func bitRateInterval(st bip37.Stats, rate float64) (lo, hi float64) {
	k := float64(st.HashFuncs)
	d := math.Pow(rate, 1/k)
	sd := math.Sqrt(d * (1 - d) / float64(st.SizeBits))
	return math.Pow(max(0, d-4*sd), k), math.Pow(min(1, d+4*sd), k)
}

// sizedRate is a rate under a sizing rule.
type sizedRate struct {
	rule model.SizingRule
	rate float64
}

// ratesBySizing pairs every rate with every sizing rule.
func ratesBySizing(rates []float64) []sizedRate {
	var out []sizedRate
	for _, rule := range model.SizingRules {
		for _, r := range rates {
			out = append(out, sizedRate{rule, r})
		}
	}
	return out
}

// planRate runs the BIP 37 rate decision on args, as scan parses them.
func planRate(t *testing.T, watch []client.WatchItem, args ...string) (*bip37Plan, error) {
	t.Helper()
	fl := &scanFlags{mode: "bip37"}
	fs := pflag.NewFlagSet("scan", pflag.ContinueOnError)
	fs.StringVar(&fl.mode, "mode", "bip37", "")
	fs.Float64Var(&fl.fpRate, "fprate", defaultScanFPRate, "")
	fs.Float64Var(&fl.privacyTarget, "privacy-target", 0, "")
	fs.IntVar(&fl.maxReloads, "max-reloads", client.DefaultMaxReloads, "")
	fl.leak.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fl.planBIP37Rate(fs, watch)
}

// TestBIP37RateDecision: --privacy-target picks the advisor's rate for a
// peer holding every filter the scan may send, which meets the target in
// the model; --fprate is taken as given; the wrong combinations are bad
// input naming their flags.
func TestBIP37RateDecision(t *testing.T) {
	one := []client.WatchItem{client.ScriptItem(p2pkh("a"))}
	var twenty []client.WatchItem
	for i := range 20 {
		twenty = append(twenty, client.ScriptItem(p2pkh(string(rune('a'+i)))))
	}
	tests := []struct {
		name        string
		watch       []client.WatchItem
		args        []string
		wantErr     []string // substrings of the error, nil for none
		rate        float64  // the rate wanted, 0: the advisor's
		from        string
		filters     uint32
		universe    uint64
		universeSrc string
		noReload    bool
	}{
		{"default rate", one, nil, nil, defaultScanFPRate, "--fprate default", 3, 10_000_000, "--universe-size default", false},
		{"--fprate", one, []string{"--fprate", "0.01", "--universe-size", "5000"}, nil, 0.01, "--fprate", 3, 5000, "--universe-size", false},
		{"target, no reloads", one, []string{"--privacy-target", "0.5", "--max-reloads", "0", "--universe-size", "3000"}, nil, 0, "--privacy-target", 1, 3000, "--universe-size", false},
		{"target, two reloads", one, []string{"--privacy-target", "0.5", "--universe-size", "3000"}, nil, 0, "--privacy-target", 3, 3000, "--universe-size", false},
		{"target, two reloads, never reloaded", one, []string{"--privacy-target", "0.5", "--universe-size", "1000"}, nil, 0, "--privacy-target", 3, 1000, "--universe-size", true},
		{"target, twenty scripts", twenty, []string{"--privacy-target", "0.1", "--universe-size", "100000", "--max-reloads", "1"}, nil, 0, "--privacy-target", 2, 100_000, "--universe-size", false},
		{"target, twenty scripts, low rate", twenty, []string{"--privacy-target", "0.5", "--universe-size", "1000000", "--max-reloads", "1"}, nil, 0, "--privacy-target", 2, 1_000_000, "--universe-size", false},
		{"both", one, []string{"--fprate", "0.001", "--privacy-target", "0.5"}, []string{"--fprate 0.001", "--privacy-target 0.5"}, 0, "", 0, 0, "", false},
		{"outpoints only", []client.WatchItem{client.OutPointItem(wire.OutPoint{}, nil)}, []string{"--privacy-target", "0.5"}, []string{"--privacy-target 0.5", "outpoints only"}, 0, "", 0, 0, "", false},
		{"universe too small", twenty, []string{"--universe-size", "20"}, []string{"--universe-size 20"}, 0, "", 0, 0, "", false},
		{"unreachable", one, []string{"--privacy-target", "0.2", "--universe-size", "3", "--max-reloads", "0"}, []string{"--privacy-target 0.2", "no filter"}, 0, "", 0, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planRate(t, tt.watch, tt.args...)
			if tt.wantErr != nil {
				if err == nil || !isUsageError(err) {
					t.Fatalf("error %v, want bad input naming %q", err, tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.rateFrom != tt.from || p.maxFilters != tt.filters || p.universe != tt.universe || p.universeFrom != tt.universeSrc {
				t.Errorf("plan %+v, want from %q, %d filters, universe %d from %q", p, tt.from, tt.filters, tt.universe, tt.universeSrc)
			}
			if tt.rate != 0 {
				if p.rate != tt.rate || p.advice != nil {
					t.Errorf("rate %v (advice %v), want %v as given", p.rate, p.advice, tt.rate)
				}
				return
			}
			if p.advice == nil {
				t.Fatalf("rate %v: no advice", p.rate)
			}
			// The rate is the advisor's for every filter the peer may
			// get, or, when cheaper, its rate for one filter raised to
			// where the client never reloads.
			rowB, err := p.adviseFor(p.maxFilters)
			if err != nil {
				t.Fatal(err)
			}
			if p.noReload != tt.noReload {
				t.Errorf("no reload %v, want %v (rate %v; the advisor's for %d filters %v)", p.noReload, tt.noReload, p.rate, p.maxFilters, rowB.FPRate)
			}
			if p.noReload {
				row1, err := p.adviseFor(1)
				if err != nil {
					t.Fatal(err)
				}
				if p.rate != max(row1.FPRate, noReloadRate) || rowB.Reachable && !(p.rate < rowB.FPRate) {
					t.Errorf("rate %v: want max(%v, %v), below %v", p.rate, row1.FPRate, noReloadRate, rowB.FPRate)
				}
				// At that rate the reload test can never fire.
				if !(client.ReloadFactor*p.rate >= 1) {
					t.Errorf("rate %v: a filter at it can be reloaded", p.rate)
				}
			} else if p.rate != rowB.FPRate || p.rate != p.advice.FPRate {
				t.Errorf("rate %v, want the advisor's %v", p.rate, p.advice.FPRate)
			}
			r, err := model.Evaluate(p.shape.params(p.sizing, p.rate, p.universe, p.sizedFor()))
			if err != nil {
				t.Fatal(err)
			}
			if !(r.PHAllExact < p.target) || !p.noReload && r.PHAllExact != p.advice.PHAllExact {
				t.Errorf("E[P_h(N)] %v at rate %v with %d filters, advice %v: want below %v", r.PHAllExact, p.rate, p.sizedFor(), p.advice.PHAllExact, p.target)
			}
			if p.rate <= defaultScanFPRate {
				t.Errorf("rate %v: want above the default %v, which leaks more", p.rate, defaultScanFPRate)
			}
			d, err := model.Evaluate(p.shape.params(p.sizing, defaultScanFPRate, p.universe, p.maxFilters))
			if err != nil {
				t.Fatal(err)
			}
			if d.PHAllExact < p.target {
				t.Errorf("the default rate already meets the target (%v): the test cannot tell the advisor's rate from it", d.PHAllExact)
			}
		})
	}
	// More filters per peer need a larger rate for the same target.
	p1, err1 := planRate(t, one, "--privacy-target", "0.5", "--max-reloads", "0")
	p3, err3 := planRate(t, one, "--privacy-target", "0.5")
	if err1 != nil || err3 != nil || !(p3.rate > p1.rate) {
		t.Errorf("rates %v (1 filter), %v (3 filters): want the second larger (%v, %v)", p1.rate, p3.rate, err1, err3)
	}
}

// sentFilters are the filters a client sends for watch at the plan's
// rate: the first and each reload, with tweaks 1, 2, ...
func sentFilters(t *testing.T, p *bip37Plan, watch []client.WatchItem, n int) []*bip37.Filter {
	t.Helper()
	var out []*bip37.Filter
	for i := range n {
		f, err := client.NewWatchFilter(watch, p.sizing, p.rate, uint32(i+1), wire.BloomUpdateAll)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// jointRate is the chance an element outside every filter matches them
// all, from the filters' bit counts (independent hashings).
func jointRate(filters []*bip37.Filter) float64 {
	q := 1.0
	for _, f := range filters {
		st := f.Stats()
		q *= math.Pow(float64(st.BitsSet)/float64(st.SizeBits), float64(st.HashFuncs))
	}
	return q
}

// TestBIP37LeakObject: the leak object gives, per peer and for the peers
// together, the filter attack on the filters as sent (the first and each
// reload): their joint rate from their bits, the false positives among
// the universe and P_h; the filter as the rate sizes it; and with a target
// its cost against the default rate and whether the filters met it.
func TestBIP37LeakObject(t *testing.T) {
	one := []client.WatchItem{client.ScriptItem(p2pkh("a")), client.ScriptItem(p2pkh("b"))}
	tests := []struct {
		name    string
		watch   []client.WatchItem
		args    []string
		reloads int
		fps     int
	}{
		{"default rate, no reload", one, nil, 0, 0},
		{"default rate, two reloads", one, nil, 2, 5},
		{"target", one, []string{"--privacy-target", "0.5", "--max-reloads", "1"}, 0, 12},
		{"target, bitcoinj sizing", one, []string{"--privacy-target", "0.5", "--sizing", "bitcoinj"}, 0, 3},
		{"outpoints only", []client.WatchItem{client.OutPointItem(wire.OutPoint{}, nil)}, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planRate(t, tt.watch, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			filters := sentFilters(t, p, tt.watch, 1+tt.reloads)
			sent := client.BIP37Peer{Address: "127.0.0.1:1", Filters: filters, MerkleBlocks: 40, Txs: 9, FalsePositiveTxs: tt.fps}
			l, err := p.bip37Leak(&client.ScanResult{FilteringPeer: sent.Address, FilterReloads: tt.reloads, BIP37Peers: []client.BIP37Peer{sent}}, tt.fps)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"mode", "watched_script_count", "bloom_filter", "universe_size", "universe_from", "privacy_target", "peers", "collusion", "warnings"} {
				if _, ok := doc[key]; !ok {
					t.Errorf("no %q in %s", key, b)
				}
			}
			if st := filters[0].Stats(); l.Filter.Bytes != st.SizeBytes || l.Filter.HashFuncs != st.HashFuncs || l.Filter.FPRate != p.rate || l.Filter.Sizing != string(p.sizing) {
				t.Errorf("filter %+v, the client builds %d bytes %d functions at %v, %s sizing", l.Filter, st.SizeBytes, st.HashFuncs, p.rate, p.sizing)
			}
			line := bip37LeakLine(l)
			if p.shape.scripts == 0 {
				if !strings.Contains(line, "no figure") {
					t.Errorf("outpoints only: line %q", line)
				}
				return
			}
			if len(l.Peers) != 1 || *l.Peers[0].Address != sent.Address || l.Collusion.Address != nil {
				t.Fatalf("peers %+v, collusion %+v: want the filtering peer, and an unnamed collusion", l.Peers, l.Collusion)
			}
			n := float64(p.shape.scripts)
			q := jointRate(filters)
			s := (float64(p.universe) - n) * q
			for _, v := range []bip37PeerLeakJSON{l.Peers[0], l.Collusion} {
				if v.Filters != len(filters) || len(v.Received) != len(filters) || !near(v.FalsePositiveRate, q) || !near(v.ExpectedFalsePositives, s) ||
					!near(v.PHAll, model.ProbAllReal(n, s)) || !near(v.PH1, n/(n+s)) || v.PHAllExact < 0 || v.PHAllExact > 1 {
					t.Errorf("view %+v, want %d filters, joint rate %v, S %v", v, len(filters), q, s)
				}
				if v.Txs != 9 || v.MerkleBlocks != 40 || v.FalsePositiveTxs != tt.fps || v.RevealedScripts != 0 || v.Abandoned {
					t.Errorf("view %+v: counts not the peer's", v)
				}
			}
			for i, f := range l.Peers[0].Received {
				if f.Bytes != filters[i].Size() || f.HashFuncs != filters[i].HashFuncs() || f.Tweak != filters[i].Tweak() || !near(f.HashingRate, jointRate(filters[i:i+1])) {
					t.Errorf("filter %d: %+v", i, f)
				}
			}
			if !strings.Contains(line, "P_h(N) ") || !strings.Contains(line, p.universeFrom) || !strings.Contains(line, string(p.sizing)+" sizing") {
				t.Errorf("line %q", line)
			}
			if p.target == 0 {
				if l.Target != nil {
					t.Errorf("a target object without a target: %+v", l.Target)
				}
				return
			}
			tg := l.Target
			if tg == nil || tg.Target != p.target || tg.Measured != tt.fps || tg.Filters != p.sizedFor() || tg.DefaultRate != defaultScanFPRate ||
				!(tg.FPTxsPerBlock > tg.DefaultFPTxsBlock) || !(tg.PHAll < p.target) || tg.Met != (l.Collusion.PHAllExact < p.target) {
				t.Errorf("target %+v", tg)
			}
			if !strings.Contains(line, "privacy target 0.5, met by the filters sent: rate ") || !tg.Met {
				t.Errorf("line %q lacks the target", line)
			}
		})
	}
}

// near reports whether x and y agree to 1e-9, relatively.
func near(x, y float64) bool {
	return x == y || math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
}

// TestBIP37LeakOfWhatWasSent: the leak speaks of the filters the peers
// received, not of the one the rate builds: a filter much emptier than
// the plan's (sized for 20 times the elements) raises P_h; a peer dropped
// mid-scan appears with its filters, and the peers together intersect
// every filter; outpoints sent in clear name their scripts for certain,
// so that P_h(N) is 1 when they name all of them; a target the filters
// sent miss is reported not met.
func TestBIP37LeakOfWhatWasSent(t *testing.T) {
	watch := []client.WatchItem{client.ScriptItem(p2pkh("a")), client.ScriptItem(p2pkh("b"))}
	p, err := planRate(t, watch, "--privacy-target", "0.5", "--max-reloads", "0", "--universe-size", "1000000")
	if err != nil {
		t.Fatal(err)
	}
	planned := sentFilters(t, p, watch, 1)[0]
	// The same elements in a filter sized for 20 times as many.
	empty := bip37.NewFilter(20*p.shape.sizing, p.rate, 9, wire.BloomUpdateAll)
	for _, it := range watch {
		for _, e := range bip37.ScriptElements(it.Script) {
			empty.Add(e)
		}
	}
	dropped := client.BIP37Peer{Address: "127.0.0.1:1", Filters: []*bip37.Filter{planned}, Abandoned: true, MerkleBlocks: 3}
	last := client.BIP37Peer{Address: "127.0.0.1:2", Filters: []*bip37.Filter{empty}, MerkleBlocks: 7, Txs: 2}
	l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{dropped, last}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Peers) != 2 || !l.Peers[0].Abandoned || l.Peers[1].Abandoned || l.Collusion.Filters != 2 {
		t.Fatalf("peers %+v, collusion %+v", l.Peers, l.Collusion)
	}
	model1, err := model.Evaluate(p.shape.params(p.sizing, p.rate, p.universe, 1))
	if err != nil {
		t.Fatal(err)
	}
	if q := jointRate([]*bip37.Filter{empty}); !near(l.Peers[1].FalsePositiveRate, q) || !(q < model1.PfCandidate/100) || !(l.Peers[1].PHAllExact > model1.PHAllExact) {
		t.Errorf("the emptier filter: rate %v (its bits say %v, the plan's %v), P_h(N) %v against the plan's %v",
			l.Peers[1].FalsePositiveRate, q, model1.PfCandidate, l.Peers[1].PHAllExact, model1.PHAllExact)
	}
	if !near(l.Collusion.FalsePositiveRate, jointRate([]*bip37.Filter{planned, empty})) || l.Collusion.PHAllExact < l.Peers[0].PHAllExact || l.Collusion.PHAllExact < l.Peers[1].PHAllExact {
		t.Errorf("collusion %+v, peers %+v", l.Collusion, l.Peers)
	}
	if l.Target == nil || l.Target.Met != (l.Collusion.PHAllExact < 0.5) {
		t.Errorf("target %+v with collusion P_h(N) %v", l.Target, l.Collusion.PHAllExact)
	}
	line := bip37LeakLine(l)
	if !strings.Contains(line, "127.0.0.1:1, abandoned: 1 filter,") || !strings.Contains(line, "the 2 peers together hold 2 filters") {
		t.Errorf("line %q", line)
	}
	// Outpoints sent in clear.
	for _, tt := range []struct {
		items    []int
		revealed int
	}{{[]int{1}, 1}, {[]int{0, 1, 1}, 2}} {
		sent := client.BIP37Peer{Address: "127.0.0.1:3", Filters: []*bip37.Filter{planned}, Added: make([]wire.OutPoint, len(tt.items)), AddedItems: tt.items}
		l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{sent}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		v := l.Peers[0]
		hidden := float64(2 - tt.revealed)
		want := 1.0
		if hidden > 0 {
			want = model.ProbAllReal(hidden, v.ExpectedFalsePositives)
		}
		if v.RevealedScripts != tt.revealed || v.FilterAdds != len(tt.items) || !near(v.PHAll, want) || tt.revealed == 2 && v.PHAllExact != 1 ||
			!strings.Contains(bip37LeakLine(l), "named for certain") || l.Target.Met && v.PHAllExact >= 0.5 {
			t.Errorf("items %v: view %+v, want %d revealed, P_h(N) %v", tt.items, v, tt.revealed, want)
		}
	}
}

// TestScanBIP37PrivacyTargetBtcd: a bip37 scan with --privacy-target 0.5
// against real btcd loads, through a relay that records it, a filter of
// the size and hash functions the rate it reports builds (not the default
// rate's), reports a leak below 0.5, and still finds the wallet's
// transactions; the text output says the same.
func TestScanBIP37PrivacyTargetBtcd(t *testing.T) {
	node, alice, pay := paidAlice(t, 2)
	relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	addr := alice.Address(node.Params).EncodeAddress()
	stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--peer", relay.Addr, "--mode", "bip37",
		"--privacy-target", "0.5", "--max-reloads", "0", "--universe-size", "1000000", "--watch", addr)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Matches []struct {
			Txid          string `json:"txid"`
			FalsePositive bool   `json:"false_positive"`
		} `json:"matches"`
		Leak struct {
			Mode   string `json:"mode"`
			Filter struct {
				FPRate         float64 `json:"fp_rate"`
				From           string  `json:"fp_rate_from"`
				Bytes          uint32  `json:"filter_bytes"`
				HashFuncs      uint32  `json:"hash_function_count"`
				SizingElements uint32  `json:"sizing_element_count"`
			} `json:"bloom_filter"`
			Target *struct {
				Target float64 `json:"target"`
			} `json:"privacy_target"`
			Peers []struct {
				Address    string  `json:"address"`
				Filters    int     `json:"filter_count"`
				PHAllExact float64 `json:"p_h_all_exact"`
				Received   []struct {
					Bytes     int    `json:"filter_bytes"`
					HashFuncs uint32 `json:"hash_function_count"`
					Tweak     uint32 `json:"tweak"`
				} `json:"filters"`
			} `json:"peers"`
			Collusion struct {
				PHAllExact float64 `json:"p_h_all_exact"`
			} `json:"collusion"`
		} `json:"leak"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range out.Matches {
		found = found || m.Txid == pay.TxHash().String() && !m.FalsePositive
	}
	if !found {
		t.Errorf("matches %+v: want the payment", out.Matches)
	}
	l := out.Leak
	if l.Mode != "bip37" || l.Filter.From != "--privacy-target" || l.Target == nil || l.Target.Target != 0.5 ||
		len(l.Peers) != 1 || l.Peers[0].Address != relay.Addr || l.Peers[0].Filters != 1 ||
		!(l.Peers[0].PHAllExact <= 0.5) || !(l.Collusion.PHAllExact <= 0.5) {
		t.Fatalf("leak %+v", l)
	}
	var loads []*wire.MsgFilterLoad
	for _, m := range relay.Requests() {
		if fl, ok := m.(*wire.MsgFilterLoad); ok {
			loads = append(loads, fl)
		}
	}
	if len(loads) != 1 {
		t.Fatalf("%d filterloads through the relay, want 1", len(loads))
	}
	bytes, k := model.SizingCore.Size(l.Filter.SizingElements, l.Filter.FPRate)
	if r := l.Peers[0].Received; len(r) != 1 || r[0].Bytes != len(loads[0].Filter) || r[0].HashFuncs != loads[0].HashFuncs || r[0].Tweak != loads[0].Tweak {
		t.Errorf("the leak's filters %+v, the filterload %d bytes, %d functions, tweak %d", r, len(loads[0].Filter), loads[0].HashFuncs, loads[0].Tweak)
	}
	if got := uint32(len(loads[0].Filter)); got != l.Filter.Bytes || loads[0].HashFuncs != l.Filter.HashFuncs || got != bytes || loads[0].HashFuncs != k {
		t.Errorf("filterload of %d bytes, %d functions; reported %d, %d; rate %v builds %d, %d", got, loads[0].HashFuncs, l.Filter.Bytes, l.Filter.HashFuncs, l.Filter.FPRate, bytes, k)
	}
	if db, dk := model.SizingCore.Size(l.Filter.SizingElements, defaultScanFPRate); db == bytes && dk == k {
		t.Errorf("the default rate builds the same filter (%d bytes, %d functions): the test cannot tell the rates apart", db, dk)
	}
	text, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", node.P2PAddr, "--mode", "bip37",
		"--privacy-target", "0.5", "--watch", addr)
	if status != exitOK || !strings.Contains(text, "leak (bip37, the model's P_h on the filters sent): "+node.P2PAddr+" holds ") || !strings.Contains(text, "privacy target 0.5, met by the filters sent: rate ") {
		t.Errorf("status %d, text %q (%s)", status, text, stderr)
	}
	t.Logf("text output:\n%s", text)
	_, stderr, status = runCLI(t, "", "scan", "--network", "regtest", "--peer", node.P2PAddr, "--mode", "bip37",
		"--privacy-target", "0.5", "--fprate", "0.001", "--watch", addr)
	if status != exitBadInput || !strings.Contains(stderr, "--fprate") || !strings.Contains(stderr, "--privacy-target") {
		t.Errorf("--fprate with --privacy-target: status %d, %q", status, stderr)
	}
}

// TestBIP37HelpFigures: the figures scan --help quotes for one address
// among the default universe are the decision's.
func TestBIP37HelpFigures(t *testing.T) {
	one := []client.WatchItem{client.ScriptItem(p2pkh("a"))}
	for _, tt := range []struct {
		args            []string
		rate            float64
		bytes, k        uint32
		phAll, fpsBlock float64
	}{
		{nil, defaultScanFPRate, 122, 13, 0.001, 0},
		{[]string{"--privacy-target", "0.5"}, 0.0057, 68, 6, 0.36, 170},
		{[]string{"--privacy-target", "0.5", "--max-reloads", "0"}, 2.54e-07, 201, 21, 0.35, 0.0072},
	} {
		p, err := planRate(t, one, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		sent := client.BIP37Peer{Address: "127.0.0.1:1", Filters: sentFilters(t, p, one, 1)}
		l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{sent}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The help gives two significant digits, or one for the
		// filter sent, whose rate is the rate asked within its fill
		// (random elements: a filter's P_h moves by some percent).
		tol := 0.05
		if l.Target == nil {
			tol = 0.15
		}
		same := func(x, y float64) bool { return math.Abs(x-y) <= tol*y }
		// The model's figure: with a target, the decision's; without,
		// the filter sent's.
		phAll := l.Collusion.PHAllExact
		if l.Target != nil {
			phAll = l.Target.PHAll
		}
		if p.rate != tt.rate || l.Filter.Bytes != tt.bytes || l.Filter.HashFuncs != tt.k || !same(phAll, tt.phAll) {
			t.Errorf("%v: rate %v, %d bytes, %d functions, E[P_h(N)] %v; help says %v, %d, %d, %v", tt.args, p.rate, l.Filter.Bytes, l.Filter.HashFuncs, phAll, tt.rate, tt.bytes, tt.k, tt.phAll)
		}
		if l.Target != nil && !same(l.Target.FPTxsPerBlock, tt.fpsBlock) {
			t.Errorf("%v: %v false-positive transactions per block, help says %v", tt.args, l.Target.FPTxsPerBlock, tt.fpsBlock)
		}
	}
}

// TestScanBIP37TargetNeverReloaded: against a node whose every coinbase
// matches the filter (the watch list holds the miner's key hash as a
// P2WPKH script, which the coinbases pay with P2PKH: a false positive in
// every block), a --fprate filter is reloaded to the limit and the leak
// counts the filters the peer got, while the rate --privacy-target picks
// at 1/ReloadFactor or above keeps the first one: one filterload through
// the relay, and the leak says one filter.
func TestScanBIP37TargetNeverReloaded(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 450) // 200 transactions per filter before a reload
	miner := "0014" + hex.EncodeToString(node.MinerKey.PkScript()[3:23])
	alice := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	type out struct {
		Reloads int `json:"filter_reload_count"`
		Leak    struct {
			Target *struct {
				ReloadImpossible bool `json:"reload_impossible"`
			} `json:"privacy_target"`
			Peers []struct {
				Filters int `json:"filter_count"`
			} `json:"peers"`
		} `json:"leak"`
	}
	for _, tt := range []struct {
		rate    []string
		reloads int
	}{
		{[]string{"--fprate", "0.02"}, client.DefaultMaxReloads},
		{[]string{"--privacy-target", "0.5", "--universe-size", "100"}, 0},
	} {
		relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
		args := append([]string{"scan", "--json", "--network", "regtest", "--peer", relay.Addr, "--mode", "bip37", "--watch", alice, "--watch", miner}, tt.rate...)
		stdout, stderr, status := runCLI(t, "", args...)
		var o out
		if status != exitOK || json.Unmarshal([]byte(stdout), &o) != nil {
			t.Fatalf("%v: status %d, %s", tt.rate, status, stderr)
		}
		loads := 0
		for _, cmd := range relay.Commands() {
			if cmd == wire.CmdFilterLoad {
				loads++
			}
		}
		if o.Reloads != tt.reloads || loads != tt.reloads+1 || len(o.Leak.Peers) != 1 || o.Leak.Peers[0].Filters != loads {
			t.Errorf("%v: %d reloads, %d filterloads, leak %+v: want %d reloads and the leak counting every filter", tt.rate, o.Reloads, loads, o.Leak, tt.reloads)
		}
		if tt.reloads == 0 && (o.Leak.Target == nil || !o.Leak.Target.ReloadImpossible) {
			t.Errorf("%v: target %+v, want a rate never reloaded", tt.rate, o.Leak.Target)
		}
	}
}

// TestScanBIP37DroppedPeerInLeak: of two relays in front of real btcd,
// the one asked first hangs up mid-scan, in its second batch of merkle
// blocks; the leak object names both peers, the dropped one abandoned
// with the filter it received (as the relay saw it go through) and the
// merkle blocks read from it before the cut: its whole first batch, and
// of the second no more than the relay forwarded (those sent just before
// the cut may be lost with the connection), and the peers together hold
// both filters.
func TestScanBIP37DroppedPeerInLeak(t *testing.T) {
	// The chain is longer than a batch, so that the cut falls in the
	// second: a cut in the first may lose every block of it with the
	// connection, under load.
	node, alice, _ := paidAlice(t, peer.MaxFilteredBlocksPerRequest-70)
	cut := &cutOnce{after: peer.MaxFilteredBlocksPerRequest + 20}
	relays := map[string]*peertest.Liar{}
	var args []string
	for range 2 {
		r := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, cut.lie)
		relays[r.Addr] = r
		args = append(args, "--peer", r.Addr)
	}
	// No reload: a false positive among the 500 coinbases would send a
	// peer a second filter.
	args = append([]string{"scan", "--json", "--network", "regtest", "--mode", "bip37", "--max-reloads", "0", "--watch", alice.Address(node.Params).EncodeAddress()}, args...)
	stdout, stderr, status := runCLI(t, "", args...)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Leak struct {
			Peers []struct {
				Address      string `json:"address"`
				Filters      int    `json:"filter_count"`
				Abandoned    bool   `json:"abandoned"`
				MerkleBlocks int    `json:"merkle_block_count"`
				Txs          int    `json:"transaction_count"`
				Received     []struct {
					Tweak uint32 `json:"tweak"`
				} `json:"filters"`
			} `json:"peers"`
			Collusion struct {
				Filters    int     `json:"filter_count"`
				PHAllExact float64 `json:"p_h_all_exact"`
			} `json:"collusion"`
		} `json:"leak"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	l := out.Leak
	if len(l.Peers) != 2 || !l.Peers[0].Abandoned || l.Peers[1].Abandoned || l.Collusion.Filters != 2 || l.Peers[0].MerkleBlocks < peer.MaxFilteredBlocksPerRequest || l.Peers[0].MerkleBlocks > cut.after || l.Peers[1].Txs == 0 {
		t.Fatalf("leak %+v: want the dropped peer abandoned, then the one that finished, 2 filters together", l)
	}
	for _, p := range l.Peers {
		var tweaks []uint32
		for _, m := range relays[p.Address].Requests() {
			if fl, ok := m.(*wire.MsgFilterLoad); ok {
				tweaks = append(tweaks, fl.Tweak)
			}
		}
		if len(tweaks) != 1 || len(p.Received) != 1 || p.Received[0].Tweak != tweaks[0] || p.Filters != 1 {
			t.Errorf("%s: leak filters %+v, filterload tweaks through its relay %v", p.Address, p.Received, tweaks)
		}
	}
}

// cutOnce hangs up the connection of the first relay to forward more
// than after merkle blocks, once, whichever relay it is.
type cutOnce struct {
	after int
	mu    sync.Mutex
	seen  int
}

func (c *cutOnce) lie(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgMerkleBlock); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seen++
		if c.seen == c.after+1 {
			return nil, true
		}
	}
	return []wire.Message{m}, false
}

// TestBIP37FilterFloor: the floor --privacy-target asks of each filter's
// rate is where the target is crossed: a peer holding the filters the
// rate is sized for, each at the floor, stays below the target, and just
// under the floor it does not; the filters the rate builds, filled to it,
// all reach it and meet the target (20 scripts among 1,000,000 at 0.3).
func TestBIP37FilterFloor(t *testing.T) {
	var watch []client.WatchItem
	for i := range 20 {
		watch = append(watch, client.ScriptItem(p2pkh(fmt.Sprint("s", i))))
	}
	p, err := planRate(t, watch, "--privacy-target", "0.3", "--max-reloads", "0", "--universe-size", "1000000")
	if err != nil {
		t.Fatal(err)
	}
	floor := p.filterFloor()
	others := p.universe - uint64(p.shape.scripts)
	b := float64(p.sizedFor())
	if _, at := model.Confidence(p.shape.scripts, others, math.Pow(floor, b)); !(at < p.target) {
		t.Errorf("at the floor %v: P_h(N) %v, target %v", floor, at, p.target)
	}
	if _, below := model.Confidence(p.shape.scripts, others, math.Pow(floor*0.999, b)); below < p.target {
		t.Errorf("below the floor %v: P_h(N) %v still meets %v", floor, below, p.target)
	}
	const trials = 200
	reach, missedAbove, missedBelow := 0, 0, 0
	for tweak := range uint32(trials) {
		f, err := client.NewWatchFilter(watch, p.sizing, p.rate, tweak*7919+1, wire.BloomUpdateAll)
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{{Address: "x", Filters: []*bip37.Filter{f}}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		above := f.Stats().FalsePositiveRate >= floor
		switch {
		case above:
			reach++
			if !l.Target.Met {
				missedAbove++
			}
		case !l.Target.Met:
			missedBelow++
		}
	}
	t.Logf("floor %.3g: %d of %d tweaks reach it; target missed by %d above it, %d below", floor, reach, trials, missedAbove, missedBelow)
	if reach != trials || missedAbove != 0 || missedBelow != 0 {
		t.Errorf("%d of %d tweaks reach the floor; target missed by %d above it, %d below", reach, trials, missedAbove, missedBelow)
	}
}

// paidAlice starts btcd with a chain where alice is paid at height 102,
// followed by after blocks.
func paidAlice(t *testing.T, after int) (*peertest.Node, *peertest.Key, *wire.MsgTx) {
	t.Helper()
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay)
	node.Generate(t, after)
	return node, alice, pay
}

// TestScanBIP37OutpointsInClear: with --flags p2pubkey-only the node
// does not add the outpoint of a P2PKH payment, so the client sends it
// with filteradd, in clear, through the relay: the scan warns before it
// starts, and the leak names the script as revealed, P_h(N) 1 for one
// watched script, the target not met. A filter whose random fill happens
// to match the outpoint already (at its false-positive rate, 0.0057)
// makes the node match its spends as well: then nothing is sent, and the
// scan is run again, with a fresh filter.
func TestScanBIP37OutpointsInClear(t *testing.T) {
	node, alice, pay := paidAlice(t, 2)
	op := wire.OutPoint{Hash: pay.TxHash()}
	for i, o := range pay.TxOut {
		if string(o.PkScript) == string(alice.PkScript()) {
			op.Index = uint32(i)
		}
	}
	for attempt := 1; ; attempt++ {
		if outpointSentInClear(t, node, alice, op) {
			return
		}
		if attempt == 3 {
			t.Fatalf("%d filters in a row matched the outpoint already", attempt)
		}
	}
}

// outpointSentInClear runs the scan of TestScanBIP37OutpointsInClear and
// checks it; it reports false when the filter loaded matched op already,
// so that no filteradd was due (and none was sent).
func outpointSentInClear(t *testing.T, node *peertest.Node, alice *peertest.Key, op wire.OutPoint) bool {
	t.Helper()
	relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--peer", relay.Addr, "--mode", "bip37",
		"--flags", "p2pubkey-only", "--privacy-target", "0.5", "--watch", alice.Address(node.Params).EncodeAddress())
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Leak struct {
			Target struct {
				Met bool `json:"met"`
			} `json:"privacy_target"`
			Collusion struct {
				FilterAdds int     `json:"filteradd_outpoint_count"`
				Revealed   int     `json:"revealed_script_count"`
				PHAll      float64 `json:"p_h_all_exact"`
			} `json:"collusion"`
		} `json:"leak"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	var loads []*wire.MsgFilterLoad
	var adds []*wire.MsgFilterAdd
	for _, m := range relay.Requests() {
		switch m := m.(type) {
		case *wire.MsgFilterLoad:
			loads = append(loads, m)
		case *wire.MsgFilterAdd:
			adds = append(adds, m)
		}
	}
	if len(loads) != 1 {
		t.Fatalf("%d filterloads, want 1", len(loads))
	}
	loaded, err := bip37.FilterFromMsg(loads[0])
	if err != nil {
		t.Fatal(err)
	}
	c := out.Leak.Collusion
	if loaded.ContainsOutPoint(&op) {
		t.Logf("the filter loaded matches alice's outpoint %v already (a false positive)", op)
		if len(adds) != 0 || c.FilterAdds != 0 || c.Revealed != 0 {
			t.Errorf("filteradds %v, leak %+v: want none, the node's filter matching the outpoint already", adds, out.Leak)
		}
		return false
	}
	if len(adds) != 1 || string(adds[0].Data) != string(bip37.OutPointBytes(&op)) {
		t.Fatalf("filteradds %v: want alice's outpoint %v", adds, op)
	}
	if c.FilterAdds != 1 || c.Revealed != 1 || c.PHAll != 1 || out.Leak.Target.Met || stderr != "" ||
		!strings.Contains(strings.Join(out.Warnings, "\n"), "go out in clear (filteradd)") {
		t.Errorf("leak %+v; warnings %q; stderr %q (want none with --json)", out.Leak, out.Warnings, stderr)
	}
	return true
}

// TestScanBIP37FailedWarnsLeak: a bip37 scan whose only peer hangs up at
// every merkle block fails, and still says on standard error what the
// peer keeps: the leak line naming it, with the filters it received.
func TestScanBIP37FailedWarnsLeak(t *testing.T) {
	node, alice, _ := paidAlice(t, 2)
	cut := func(m wire.Message) ([]wire.Message, bool) {
		_, isBlock := m.(*wire.MsgMerkleBlock)
		return []wire.Message{m}, isBlock
	}
	relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, cut)
	_, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", relay.Addr, "--mode", "bip37",
		"--watch", alice.Address(node.Params).EncodeAddress())
	loads := 0
	for _, cmd := range relay.Commands() {
		if cmd == wire.CmdFilterLoad {
			loads++
		}
	}
	want := fmt.Sprintf("the peers keep the filters they received: leak (bip37, the model's P_h on the filters sent): --peer %s holds %s", relay.Addr, plural(loads, "filter"))
	t.Logf("stderr: %s", stderr)
	if status != exitFailure || loads == 0 || !strings.Contains(stderr, want) {
		t.Errorf("status %d, %d filterloads, stderr %q: want %q", status, loads, stderr, want)
	}
	// With --json no result carries the warning: standard error holds it
	// as a JSON line {"warning": ...} before the error's object, and no
	// text.
	_, stderr, status = runCLI(t, "", "scan", "--json", "--network", "regtest", "--peer", relay.Addr, "--mode", "bip37",
		"--watch", alice.Address(node.Params).EncodeAddress())
	dec := json.NewDecoder(strings.NewReader(stderr))
	var warned, failed bool
	for dec.More() {
		var v struct {
			Warning string `json:"warning"`
			Error   string `json:"error"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("--json: standard error is not JSON alone (%v): %q", err, stderr)
		}
		warned = warned || strings.Contains(v.Warning, "the peers keep the filters they received: leak (bip37")
		failed = failed || v.Error != ""
	}
	if status != exitFailure || !warned || !failed {
		t.Errorf("--json: status %d, stderr %q: want the leak warning and the error, as JSON", status, stderr)
	}
}

// TestBIP37LeakAgreesWithModel: the leak object's P_h for a filter as
// sent (from its bits) is the model's for the rate asked, within the
// binomial noise of the filter's bits, and the model's filter matches at
// that rate: the client fills its room to it, so neither is the near-empty
// filter's P_h of 1.
func TestBIP37LeakAgreesWithModel(t *testing.T) {
	var twenty []client.WatchItem
	for i := range 20 {
		twenty = append(twenty, client.ScriptItem(p2pkh(fmt.Sprint("agree", i))))
	}
	for _, watch := range [][]client.WatchItem{twenty[:1], twenty} {
		for _, rate := range []string{"0.0001", "0.001", "0.01"} {
			p, err := planRate(t, watch, "--fprate", rate, "--universe-size", "1000000")
			if err != nil {
				t.Fatal(err)
			}
			r, err := model.Evaluate(p.shape.params(p.sizing, p.rate, p.universe, 1))
			if err != nil {
				t.Fatal(err)
			}
			for tweak := range uint32(3) {
				f, err := client.NewWatchFilter(watch, p.sizing, p.rate, tweak, wire.BloomUpdateAll)
				if err != nil {
					t.Fatal(err)
				}
				st := f.Stats()
				if lo, hi := bitRateInterval(st, p.rate); r.Pf < lo || r.Pf > hi {
					t.Errorf("%d scripts at %v: the model's filter matches at %.3g, outside [%.3g, %.3g]", len(watch), p.rate, r.Pf, lo, hi)
				}
				l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{{Address: "x", Filters: []*bip37.Filter{f}}}}, 0)
				if err != nil {
					t.Fatal(err)
				}
				// P_h falls as the rate grows: the ends of the rate's
				// interval bound it.
				lo, hi := bitRateInterval(st, r.Pf)
				others := p.universe - uint64(p.shape.scripts)
				ph1Hi, phAllHi := model.Confidence(p.shape.scripts, others, lo)
				ph1Lo, phAllLo := model.Confidence(p.shape.scripts, others, hi)
				c := l.Collusion
				t.Logf("%d scripts at %v: leak P_h(1) %.3g P_h(N) %.3g, model %.3g %.3g", len(watch), p.rate, c.PH1Exact, c.PHAllExact, r.PH1Exact, r.PHAllExact)
				for _, x := range []struct {
					name    string
					leak, m float64
					lo, hi  float64
				}{{"P_h(1)", c.PH1Exact, r.PH1Exact, ph1Lo, ph1Hi}, {"P_h(N)", c.PHAllExact, r.PHAllExact, phAllLo, phAllHi}} {
					if x.leak < x.lo || x.leak > x.hi || x.m < x.lo || x.m > x.hi {
						t.Errorf("%d scripts at %v: leak %s %.3g, model %.3g, not both in [%.3g, %.3g]", len(watch), p.rate, x.name, x.leak, x.m, x.lo, x.hi)
					}
				}
			}
		}
	}
}

// TestBIP37NearEmptyWarning: the leak warns of a filter that matches far
// below its rate (sized for the watch list's room, holding only its
// elements), and not of the filter the client sends, filled to the rate.
func TestBIP37NearEmptyWarning(t *testing.T) {
	watch := []client.WatchItem{client.ScriptItem(p2pkh("a"))}
	p, err := planRate(t, watch, "--fprate", "0.01")
	if err != nil {
		t.Fatal(err)
	}
	filled, err := client.NewWatchFilter(watch, p.sizing, p.rate, 1, wire.BloomUpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	empty := bip37.NewFilter(p.shape.sizing, p.rate, 1, wire.BloomUpdateAll)
	for _, e := range bip37.ScriptElements(watch[0].Script) {
		empty.Add(e)
	}
	for _, tt := range []struct {
		f    *bip37.Filter
		warn bool
	}{{filled, false}, {empty, true}} {
		l, err := p.bip37Leak(&client.ScanResult{BIP37Peers: []client.BIP37Peer{{Address: "x", Filters: []*bip37.Filter{tt.f}}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(l.Warnings, func(w string) bool { return strings.Contains(w, "reveals more than the rate says") })
		if warned != tt.warn {
			t.Errorf("filter at %.3g from its bits: warned %v, want %v (%q)", tt.f.Stats().FalsePositiveRate, warned, tt.warn, l.Warnings)
		}
	}
}
