package client

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// rateInterval is the binomial interval, at z = 4, of the rate a filter of
// bits bits and k hash functions shows from its bits when each bit is set
// with the probability that gives rate: the range of rates a filter built
// at rate shows but for noise.
func rateInterval(bits int, k uint32, rate float64) (lo, hi float64) {
	if bits == 0 || k == 0 {
		return 1, 1
	}
	d := math.Pow(rate, 1/float64(k))
	sd := math.Sqrt(d * (1 - d) / float64(bits))
	return math.Pow(max(0, d-4*sd), float64(k)), math.Pow(min(1, d+4*sd), float64(k))
}

// The filter sent matches an element outside it, from its bits, at the
// rate asked: its room for found outpoints is filled with random
// elements, not left empty (20 scripts at 0.0001 held alone match at
// about 1e-26), and the watch list is all in it.
func TestBIP37WatchFilterAtRate(t *testing.T) {
	var watch []WatchItem
	for i := range 20 {
		watch = append(watch, ScriptItem(peertest.NewKey(fmt.Sprint("fill", i)).PkScript()))
	}
	for _, rule := range bip37.Sizings {
		for _, rate := range []float64{1e-4, 1e-3, 1e-2, 1} {
			for tweak := range uint32(3) {
				f, err := NewWatchFilter(watch, rule, rate, tweak, wire.BloomUpdateAll)
				if err != nil {
					t.Fatal(err)
				}
				bytes, k := rule.Size(uint32(20+WatchFilterHeadroom*len(watch)), rate)
				if f.Size() != int(bytes) || f.HashFuncs() != k {
					t.Errorf("%s %v: %d bytes, %d hash functions; the rule sizes %d, %d", rule, rate, f.Size(), f.HashFuncs(), bytes, k)
				}
				got := f.Stats().FalsePositiveRate
				lo, hi := rateInterval(f.Size()*8, f.HashFuncs(), rate)
				if got < rate || got < lo || got > hi {
					t.Errorf("%s %v tweak %d: the filter matches at %.3g from its bits, want at least %v and within [%.3g, %.3g]", rule, rate, tweak, got, rate, lo, hi)
				}
				for i, it := range watch {
					for _, e := range bip37.ScriptElements(it.Script) {
						if !f.Contains(e) {
							t.Errorf("%s %v: script %d is not in the filter", rule, rate, i)
						}
					}
				}
			}
		}
	}
}

// txElements are the elements a node tests a transaction's match with:
// its txid, and each input's outpoint and data pushes and each output's
// data pushes.
func txElements(tx *wire.MsgTx) []string {
	id := tx.TxHash()
	out := []string{string(id[:])}
	for _, in := range tx.TxIn {
		out = append(out, string(bip37.OutPointBytes(&in.PreviousOutPoint)))
		for _, e := range bip37.ScriptElements(in.SignatureScript) {
			out = append(out, string(e))
		}
	}
	for _, o := range tx.TxOut {
		for _, e := range bip37.ScriptElements(o.PkScript) {
			out = append(out, string(e))
		}
	}
	return out
}

// chainTxs are the transactions of the fixture's blocks 1..to.
func chainTxs(t *testing.T, to int32) []*wire.MsgTx {
	t.Helper()
	var txs []*wire.MsgTx
	for h := int32(1); h <= to; h++ {
		hash, err := fx.node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := fx.node.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, b.Transactions...)
	}
	return txs
}

// On real btcd, a scan with the filled filter finds every payment, and
// the node sends false positives as often as the filter's rate says: the
// count of false-positive transactions is within the Poisson interval
// (poissonInterval, fpTail in each tail) of the sum, over the chain's
// other transactions, of the chance one of
// their elements matches at the node's filter's rate from its bits: the
// filter loaded with the outpoints found added to it. Elements several
// transactions share (the coinbases' payee, flag and null outpoint) make
// all of them match together; a scan whose filter holds one, loaded or
// after an outpoint added, is run again with a fresh filter. The
// node does not add what matches to the filter (BloomUpdateNone): with
// BloomUpdateAll a false positive's outpoints join it, and every later
// transaction spending from one matches too, a chain the rate does not
// count.
func TestBIP37ScanFalsePositivesAtRate(t *testing.T) {
	needFixture(t)
	txs := chainTxs(t, fx.tip)
	count := map[string]int{}
	for _, tx := range txs {
		for _, e := range uniq(txElements(tx)) {
			count[e]++
		}
	}
	for _, rate := range []float64{0.001, 0.01, 0.05} {
		for try := 0; ; try++ {
			res, loaded, added := scanOneFilter(t, items(fx.watch), BIP37Options{FPRate: rate, Flags: wire.BloomUpdateNone, MaxReloads: -1})
			if q := loaded.Stats().FalsePositiveRate; q < rate || q > rateHigh(loaded, rate) {
				t.Errorf("rate %v: the filter loaded matches at %.3g from its bits, want within [%v, %.3g]", rate, q, rate, rateHigh(loaded, rate))
			}
			f := withAdded(t, loaded, added)
			q := f.Stats().FalsePositiveRate
			shared := false
			want, others := 0.0, 0
			for _, tx := range txs {
				if _, ok := fx.want[tx.TxHash()]; ok {
					continue
				}
				others++
				unique := 0
				for _, e := range uniq(txElements(tx)) {
					if count[e] > 1 {
						shared = shared || f.Contains([]byte(e))
						continue
					}
					unique++
				}
				want += 1 - math.Pow(1-q, float64(unique))
			}
			if shared {
				if try == 5 {
					t.Fatalf("rate %v: every filter of 6 held an element many transactions share", rate)
				}
				continue
			}
			fps := 0
			for _, m := range res.Matches {
				if m.FalsePositive {
					fps++
				}
			}
			lo, hi := poissonInterval(want, fpTail)
			t.Logf("rate %v (from its bits %.3g): %d false-positive transactions of %d others, expected %.1f [%d, %d]; rate × transactions %.1f",
				rate, q, fps, others, want, lo, hi, rate*float64(others))
			if fps < lo || fps > hi {
				t.Errorf("rate %v: %d false-positive transactions, expected %.1f, outside [%d, %d]", rate, fps, want, lo, hi)
			}
			break
		}
	}
}

// fpTail is the chance TestBIP37ScanFalsePositivesAtRate leaves in each
// tail of a count's interval: with three rates, a run fails by chance
// in fewer than 6 in 10^5. At 4 standard deviations either side (and one
// more above), the upper tail held up to 2.1*10^-4 for the 3.9 false
// positives expected at rate 0.001, 2.8*10^-4 over the three.
const fpTail = 1e-5

// poissonInterval returns the counts lo and hi such that a Poisson count
// of the mean falls below lo, or above hi, with chance at most tail
// each. A sum of independent draws (a count of false positives, each
// transaction matching with a chance of its own) varies less than a
// Poisson count of the same mean (its variance is the sum of p(1-p),
// not of p), so the interval is, if anything, wide for it.
func poissonInterval(mean, tail float64) (lo, hi int) {
	below := 0.0 // P(X < k)
	for k := 0; ; k++ {
		lg, _ := math.Lgamma(float64(k) + 1)
		p := math.Exp(float64(k)*math.Log(mean) - mean - lg)
		if mean == 0 {
			p = map[bool]float64{true: 1}[k == 0]
		}
		if below+p <= tail {
			lo = k + 1
		}
		below += p
		if 1-below <= tail {
			return lo, k
		}
	}
}

// TestPoissonInterval: the counts outside which a Poisson count falls
// with chance 10^-5 each side, against values summed apart (Python's
// math.lgamma): none below for small means.
func TestPoissonInterval(t *testing.T) {
	for _, tc := range []struct {
		mean   float64
		lo, hi int
	}{{0, 0, 0}, {1.1, 0, 8}, {3.9, 0, 15}, {35.8, 13, 64}, {165.4, 114, 223}} {
		if lo, hi := poissonInterval(tc.mean, 1e-5); lo != tc.lo || hi != tc.hi {
			t.Errorf("mean %v: [%d, %d], want [%d, %d]", tc.mean, lo, hi, tc.lo, tc.hi)
		}
	}
}

// uniq is es without repeats.
func uniq(es []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range es {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// rateHigh is the highest rate a filter f built at rate shows from its
// bits but for noise (rateInterval).
func rateHigh(f *bip37.Filter, rate float64) float64 {
	_, hi := rateInterval(f.Size()*8, f.HashFuncs(), rate)
	return hi
}

// withAdded is a copy of f with the elements of added inserted: the
// filter a node holds after the filteradd messages that followed f.
func withAdded(t *testing.T, f *bip37.Filter, added [][]byte) *bip37.Filter {
	t.Helper()
	g, err := bip37.FilterFromMsg(f.MsgFilterLoad())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range added {
		g.Add(e)
	}
	return g
}

// scanOneFilter scans the fixture's chain through a relay with opt,
// checks that every payment is found, and returns the result, the one
// filter the relay saw loaded and the data of the filteradd messages
// that followed it.
func scanOneFilter(t *testing.T, watch []WatchItem, opt BIP37Options) (res *ScanResult, loaded *bip37.Filter, added [][]byte) {
	t.Helper()
	r := &relay{h: &hangupOnce{done: true}}
	r.lie = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, r.forward)
	c := connect(t, 0, r.lie.Addr)
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: watch, To: fx.tip}, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	loads := filterLoads(r.lie)
	if len(loads) != 1 {
		t.Fatalf("%d filterloads", len(loads))
	}
	loaded, err = bip37.FilterFromMsg(loads[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.lie.Requests() {
		if a, ok := m.(*wire.MsgFilterAdd); ok {
			added = append(added, a.Data)
		}
	}
	return res, loaded, added
}

// A filter the scan loads never holds the empty element, which btcd
// matches against OP_0 (peer's TestBTCDMatchesEmptyPush), nor the null
// outpoint of every coinbase: at a rate of 0.1, about a fifth of the
// filters drawn would hold one, tweak fixed or not, and one of 128 would
// with a chance above 0.99999.
func TestBIP37DrawMatchesNotEveryBlock(t *testing.T) {
	watch := []WatchItem{ScriptItem(peertest.NewKey("empty").PkScript())}
	tweak := uint32(7)
	for _, tc := range []struct {
		name  string
		tweak *uint32
	}{{"fresh tweaks", nil}, {"fixed tweak", &tweak}} {
		s := &bip37Scan{opt: BIP37Options{FPRate: 0.1, Tweak: tc.tweak}}
		for i := range 128 {
			f, err := s.draw(watch, nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Contains(nil) || f.ContainsOutPoint(&wire.OutPoint{Index: wire.MaxPrevOutIndex}) {
				t.Fatalf("%s: filter %d of 128 holds the empty element or the null outpoint", tc.name, i)
			}
		}
	}
}

// bip37FloodScans is how many scans TestBIP37NodeFilterMatchesNotEveryBlock
// makes: at a rate of 0.09, the outpoints each finds (added with
// filteradd) made the node's filter hold the empty element or the null
// outpoint at 0, 4 and 6 scanned filtered-block requests of 150 scans
// (three runs) without a fresh filter loaded then (at 0.2, 12 to 24);
// with it, none was, in six runs.
const bip37FloodScans = 300

// The filter the node holds whenever it is asked for filtered blocks (the
// last loaded, with the outpoints added since) holds neither the empty
// element nor the null outpoint: when the outpoints found make it hold
// one, a fresh filter holding them is loaded before the next request.
// The node's filter is rebuilt from what its relay forwarded, over
// bip37FloodScans scans of the fixture's chain.
func TestBIP37NodeFilterMatchesNotEveryBlock(t *testing.T) {
	needFixture(t)
	r := &relay{h: &hangupOnce{done: true}}
	r.lie = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, r.forward)
	c := connect(t, 0, r.lie.Addr)
	reloads := 0
	var ends []int // the requests forwarded when each scan ended
	for range bip37FloodScans {
		res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: fx.tip},
			BIP37Options{FPRate: 0.09, Flags: wire.BloomUpdateNone, MaxReloads: 8})
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		reloads += res.FilterReloads
		ends = append(ends, len(r.lie.Requests()))
	}
	var f *bip37.Filter
	asked, flooded, kept := 0, 0, 0
	pending := false // the last request went to a filter holding one
	for i, m := range r.lie.Requests() {
		if len(ends) > 0 && i == ends[0] {
			// The scan's last answer was scanned.
			if pending {
				kept++
			}
			pending, ends = false, ends[1:]
		}
		switch m := m.(type) {
		case *wire.MsgFilterLoad:
			// The answer to a request in flight when the filter changed
			// is dropped, not scanned.
			pending = false
			var err error
			if f, err = bip37.FilterFromMsg(m); err != nil {
				t.Fatal(err)
			}
		case *wire.MsgFilterAdd:
			f.Add(m.Data)
		case *wire.MsgGetData:
			if pending {
				kept++
			}
			asked++
			pending = f != nil && matchesEveryBlock(f)
			if pending {
				flooded++
			}
		}
	}
	if pending {
		kept++
	}
	t.Logf("%d scans at 0.09: %d fresh filters loaded; %d of %d filtered-block requests went to a filter holding an element of every block, %d of them scanned", bip37FloodScans, reloads, flooded, asked, kept)
	if kept > 0 {
		t.Errorf("%d filtered-block requests whose answer was scanned went to a node whose filter holds the empty element or the null outpoint", kept)
	}
}
