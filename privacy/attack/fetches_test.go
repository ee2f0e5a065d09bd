package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// binomialRatio is C(b-k, f-k)/C(b, f) = ∏_{i<k} (f-i)/(b-i), multiplied
// out in float64 for the small k of these tests.
func binomialRatio(b, f, k int64) float64 {
	r := 1.0
	for i := int64(0); i < k; i++ {
		r *= float64(max(f-i, 0)) / float64(b-i)
	}
	return r
}

// buildIndex writes an index of the appearances, each in a transaction
// of its own; the writer sorts them.
func buildIndex(t *testing.T, first int32, nblocks int, apps map[string][]int32, memory int) []byte {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), memory)
	defer ix.Close()
	txs := map[int32]int{}
	for _, c := range slices.Sorted(maps.Keys(apps)) {
		for _, h := range apps[c] {
			ix.AddTx(c, h, txs[h])
			txs[h]++
		}
	}
	hd := &universe.IndexHeader{Network: "regtest", First: first}
	for h := first; h < first+int32(nblocks); h++ {
		hd.Hashes = append(hd.Hashes, blockHash(h))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func blockHash(h int32) chainhash.Hash {
	return chainhash.DoubleHashH([]byte(fmt.Sprintf("block %d", h)))
}

// TestAnalyzeFetchesSynthetic builds a chain of 20,000 blocks, a wallet of
// 10 scripts of 2 appearances each and 20,000 other candidates of 1 to 3
// appearances at random blocks, and a session that fetches the wallet's
// blocks and 30 more at random: the wallet's scripts rank first with high
// probability, and the spurious matches stay within the model's 99% range.
func TestAnalyzeFetchesSynthetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const nblocks, first = 20000, 0
	apps := map[string][]int32{}
	pick := func(k int) []int32 {
		var hs []int32
		for len(hs) < k {
			h := int32(rng.IntN(nblocks))
			if !slices.Contains(hs, h) {
				hs = append(hs, h)
			}
		}
		slices.Sort(hs)
		return hs
	}
	fetched := map[int32]bool{}
	var wallet []string
	for i := 0; i < 10; i++ {
		c := fmt.Sprintf("wallet-%02d", i)
		wallet = append(wallet, c)
		apps[c] = pick(2)
		for _, h := range apps[c] {
			fetched[h] = true
		}
	}
	for len(fetched) < 50 {
		fetched[int32(rng.IntN(nblocks))] = true
	}
	for i := 0; i < 20000; i++ {
		apps[fmt.Sprintf("other-%05d", i)] = pick(1 + i%3)
	}
	data := buildIndex(t, first, nblocks, apps, 1<<16)
	ir, err := universe.NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s := &capture.FetchSession{ID: "s-1", Client: "127.0.0.1:1"}
	for h := range fetched {
		s.Blocks = append(s.Blocks, blockHash(h))
	}
	s.Blocks = append(s.Blocks, blockHash(99999)) // not in the chain
	s.Ranges = []capture.FilterRange{{Command: capture.CmdGetCFilters, StartHeight: 0, StopHash: blockHash(nblocks - 1)}}
	reps, err := AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.ScannedBlocks != nblocks || r.FetchedBlocks != 50 || r.FetchedUnknown != 1 || r.UniverseSize != uint64(len(apps)) {
		t.Fatalf("B=%d F=%d unknown=%d universe=%d", r.ScannedBlocks, r.FetchedBlocks, r.FetchedUnknown, r.UniverseSize)
	}
	if len(r.Warnings) != 3 || !strings.Contains(r.Warnings[0], "not in the index's chain") || !strings.Contains(r.Warnings[1], "appear in a single block") ||
		r.Warnings[2] != leak.CoversNotRuledOut {
		t.Errorf("warnings %q", r.Warnings)
	}
	// Every wallet script matches; the spurious ones are what chance gives.
	got := map[string]FetchMatch{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	for _, c := range wallet {
		m, ok := got[c]
		if !ok {
			t.Fatalf("wallet script %s not matched", c)
		}
		if want := binomialRatio(nblocks, 50, 2); math.Abs(m.ChanceProbability-want) > 1e-12 || m.Appearances != 2 {
			t.Errorf("%s: chance %g (k %d), want %g", c, m.ChanceProbability, m.Appearances, want)
		}
	}
	spurious := float64(r.MatchedCount) - float64(len(wallet))
	var model float64
	for k := 1; k <= 3; k++ {
		model += float64(20000/3) * binomialRatio(nblocks, 50, int64(k))
	}
	lo, hi := poisson99(model)
	if spurious < lo || spurious > hi {
		t.Errorf("%v spurious matches, model %.3g (99%%: %v..%v)", spurious, model, lo, hi)
	}
	if math.Abs(r.ExpectedFalsePositives-model-10*binomialRatio(nblocks, 50, 2)) > 0.05*model {
		t.Errorf("expected false positives %g, model %g", r.ExpectedFalsePositives, model)
	}
	// Ranked by chance: the k=2 and k=3 matches before the k=1 ones.
	for i := 1; i < len(r.Matched); i++ {
		if r.Matched[i].ChanceProbability < r.Matched[i-1].ChanceProbability {
			t.Fatalf("match %d less explained by chance than %d", i, i-1)
		}
	}
	for _, c := range wallet {
		if got[c].Probability < 0.9 {
			t.Errorf("%s: probability %.3f that it is the wallet's", c, got[c].Probability)
		}
	}
	if !strings.Contains(r.Verdict, "are the wallet's") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

// poisson99 is a 99% range for a Poisson count of mean m (normal
// approximation, widened for small means).
func poisson99(m float64) (float64, float64) {
	d := 2.576*math.Sqrt(m) + 3
	return math.Max(0, m-d), m + d
}

func TestAnalyzeFetchesEverythingFetched(t *testing.T) {
	data := buildIndex(t, 0, 5, map[string][]int32{"a": {1}, "b": {2, 4}}, 0)
	ir, _ := universe.NewIndexReader(bytes.NewReader(data))
	s := &capture.FetchSession{ID: "x", Client: "c"}
	for h := int32(0); h < 5; h++ {
		s.Blocks = append(s.Blocks, blockHash(h))
	}
	reps, err := AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.MatchedCount != 2 || len(r.Matched) != 0 || len(r.Warnings) != 2 || !strings.Contains(r.Verdict, "reveal nothing") {
		t.Fatalf("%+v", r)
	}
}

// coLocatedChain indexes a chain of 200 blocks in which a payer pays the
// wallet's script w twice at blocks 10 and 50, the change c1 of the first
// payment funding the second (whose change c2 stays unspent), and the
// wallet spends w at block 90 to o, its change to b; 300 noise scripts
// appear in one or two random blocks. The session fetched the wallet's
// three blocks and one false positive.
func coLocatedChain(t *testing.T, withTxs bool) ([]byte, *capture.FetchSession) {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	add := func(c string, h int32, tx int) {
		if withTxs {
			ix.AddTx(c, h, tx)
		} else {
			ix.Add(c, h)
		}
	}
	add("p1", 5, 2)
	for _, c := range []string{"p1", "w", "c1"} {
		add(c, 10, 3)
	}
	for _, c := range []string{"c1", "w", "c2"} {
		add(c, 50, 1)
	}
	for _, c := range []string{"w", "o", "b"} {
		add(c, 90, 4)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 300 {
		for range 1 + rng.IntN(2) {
			add(fmt.Sprintf("noise-%03d", i), int32(rng.IntN(200)), 5+rng.IntN(20))
		}
	}
	hd := &universe.IndexHeader{Network: "regtest"}
	for h := range int32(200) {
		hd.Hashes = append(hd.Hashes, blockHash(h))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	s := &capture.FetchSession{ID: "s", Client: "c", Blocks: []chainhash.Hash{blockHash(10), blockHash(50), blockHash(90), blockHash(150)},
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StopHash: blockHash(199)}}}
	return buf.Bytes(), s
}

// TestAnalyzeFetchesCoLocated: the payer's change, whose every appearance
// lies in the wallet's transactions, is grouped with the wallet's script,
// and so are the outputs of the wallet's spend: every one of them rides
// in the others' transactions. The wallet's script, the group's one most
// appearing member, riding in transactions of three or more matches,
// leads the group and has its whole probability (see package leak's
// documentation); the change, riding in two blocks beside it, three
// tenths (chained). Without the transactions in the index, the change
// takes a probability of its own.
func TestAnalyzeFetchesCoLocated(t *testing.T) {
	for _, withTxs := range []bool{true, false} {
		data, s := coLocatedChain(t, withTxs)
		ir, err := universe.NewIndexReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		reps, err := AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := reps[0]
		got := map[string]FetchMatch{}
		for _, m := range r.Matched {
			got[m.Candidate] = m
		}
		w, c1 := got["w"], got["c1"]
		if w.Appearances != 3 || c1.Appearances != 2 {
			t.Fatalf("w %+v, c1 %+v", w, c1)
		}
		if !withTxs {
			if w.Group == c1.Group && w.Group != 0 || r.CoLocated != 0 || r.Transactions ||
				!slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "records no transactions") }) {
				t.Errorf("without transactions: w in group %d, c1 in %d, %d co-located, warnings %q", w.Group, c1.Group, r.CoLocated, r.Warnings)
			}
			continue
		}
		if w.Group == 0 || c1.Group != w.Group || got["c2"].Group != w.Group || got["o"].Group != w.Group || got["b"].Group != w.Group {
			t.Fatalf("w in group %d; c1 %d, c2 %d, o %d, b %d: want one group", w.Group, c1.Group, got["c2"].Group, got["o"].Group, got["b"].Group)
		}
		g := r.Groups[w.Group-1]
		if len(g.Members) != 5 || g.Members[0] != "w" || !strings.Contains(g.Reason, "transactions") || g.Probability < 0.95 {
			t.Errorf("group %+v", g)
		}
		// w leads the group; c1 rides in both its blocks beside w, which
		// appears more: a script chained through the wallet's
		// transactions, three tenths.
		if math.Abs(w.Probability-g.Probability) > 1e-9 || math.Abs(c1.Probability-g.Probability*0.3) > 1e-9 ||
			w.ProbabilityLow > w.Probability || w.ProbabilityHigh < w.Probability || c1.ProbabilityLow > c1.Probability || c1.ProbabilityHigh < c1.Probability {
			t.Errorf("w %.4f (%.4f-%.4f), c1 %.4f (%.4f-%.4f), group %.4f", w.Probability, w.ProbabilityLow, w.ProbabilityHigh,
				c1.Probability, c1.ProbabilityLow, c1.ProbabilityHigh, g.Probability)
		}
		if r.CoLocated != 5 || r.Confident != 1 || r.ConfidentGroups != 1 {
			t.Errorf("%d co-located, %d confident, %d confident groups", r.CoLocated, r.Confident, r.ConfidentGroups)
		}
		for _, c := range r.ByAppearances {
			if c.Appearances == 2 && c.CoLocated != 1 {
				t.Errorf("k = 2: %+v, want c1 co-located", c)
			}
		}
		if !strings.Contains(r.Verdict, "ride in another match's transactions") {
			t.Errorf("verdict %q", r.Verdict)
		}
	}
}

// TestAnalyzeFetchesIntersect joins two sessions of one client: the first
// scanned blocks 0..499, the second 400..999; the wallet's script appears
// at 100 and 700, once in each session's range, twice in the join. Block
// 450, fetched by the first and scanned but not fetched by the second,
// is not fetched in the join.
func TestAnalyzeFetchesIntersect(t *testing.T) {
	apps := map[string][]int32{"wallet": {100, 700}, "at-450": {450}}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		apps[fmt.Sprintf("noise-%04d", i)] = []int32{int32(rng.IntN(1000))}
	}
	data := buildIndex(t, 0, 1000, apps, 0)
	ir, err := universe.NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	one := &capture.FetchSession{ID: "one", Client: "127.0.0.1:1", Blocks: []chainhash.Hash{blockHash(100), blockHash(450), blockHash(30)},
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StopHash: blockHash(499)}}}
	two := &capture.FetchSession{ID: "two", Client: "127.0.0.1:1", Blocks: []chainhash.Hash{blockHash(700), blockHash(900)},
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StartHeight: 400, StopHash: blockHash(999)}}}
	reps, err := AnalyzeFetches([]*capture.FetchSession{one, two}, ir, FetchOptions{Intersect: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 {
		t.Fatalf("%d reports, want the two sessions' and their join", len(reps))
	}
	joint := reps[2]
	if joint.Session != "one+two" || joint.ScannedBlocks != 1000 || !slices.Equal(joint.FetchedHeights, []int32{30, 100, 700, 900}) {
		t.Fatalf("join %s: B = %d, fetched %v", joint.Session, joint.ScannedBlocks, joint.FetchedHeights)
	}
	prob := func(r *FetchReport) (uint64, float64) {
		for _, m := range r.Matched {
			if m.Candidate == "wallet" {
				return m.Appearances, m.Probability
			}
		}
		return 0, 0
	}
	k1, p1 := prob(reps[0])
	k2, p2 := prob(reps[1])
	kj, pj := prob(joint)
	if k1 != 1 || k2 != 1 || kj != 2 || pj < 0.9 || pj <= max(p1, p2) {
		t.Errorf("wallet: k %d, %d and %d joined; probability %.3f, %.3f and %.3f joined", k1, k2, kj, p1, p2, pj)
	}
	if _, p := prob(joint); p == 0 {
		t.Error("the wallet does not match the join")
	}
	for _, m := range joint.Matched {
		if m.Candidate == "at-450" {
			t.Errorf("a script of block 450 matches the join: %+v", m)
		}
	}
}

// TestFetchesScanIsFilterRanges: a client syncs filter headers
// (getcfheaders) from the genesis block whatever it scans; only its filter
// ranges (getcfilters) are what it scanned, so a session that asked for
// headers 0..999 and filters 600..999 scanned 400 blocks, not 1,000.
func TestFetchesScanIsFilterRanges(t *testing.T) {
	apps := map[string][]int32{"wallet": {700, 800}}
	for i := range 2000 {
		apps[fmt.Sprintf("other-%04d", i)] = []int32{int32(i % 1000), int32((i*37 + 11) % 1000)}
	}
	data := buildIndex(t, 0, 1000, apps, 0)
	s := &capture.FetchSession{ID: "s", Client: "c", Blocks: []chainhash.Hash{blockHash(700), blockHash(800)}}
	for from := uint32(0); from < 1000; from += 500 {
		s.Ranges = append(s.Ranges, capture.FilterRange{Command: capture.CmdGetCFHeaders, StartHeight: from, StopHash: blockHash(int32(from) + 499)})
	}
	s.Ranges = append(s.Ranges, capture.FilterRange{Command: capture.CmdGetCFilters, StartHeight: 600, StopHash: blockHash(999)})
	ir, err := universe.NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.ScannedFrom == nil || *r.ScannedFrom != 600 || *r.ScannedTo != 999 || r.ScannedBlocks != 400 || r.FetchedFraction != 2.0/400 {
		t.Errorf("scanned %v..%v (B = %d, f = %g), want 600..999 (B = 400, f = 0.005)", r.ScannedFrom, r.ScannedTo, r.ScannedBlocks, r.FetchedFraction)
	}
	// Headers alone leave the scan unknown, and say so.
	s.Ranges = s.Ranges[:2]
	ir, _ = universe.NewIndexReader(bytes.NewReader(data))
	reps, err = AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(reps[0].Warnings, func(w string) bool { return strings.Contains(w, "only filter headers") }) {
		t.Errorf("headers only: warnings %q", reps[0].Warnings)
	}
}

// TestFetchesSingles: every script seen once in a fetched block matches,
// the wallet's and the block's other outputs alike. Twenty blocks of a
// thousand hold 30 such scripts each; the wallet fetched 10 of them, one
// wallet script of one appearance in each: of the 310 matches of one
// appearance about 10 are the wallet's, each at about 10/310, where
// counting each fetched block as a group that chance does not explain
// gave 0.7.
func TestFetchesSingles(t *testing.T) {
	apps := map[string][]int32{}
	rng := rand.New(rand.NewPCG(21, 22))
	var fetched []chainhash.Hash
	for h := range int32(1000) {
		for i := range 30 {
			apps[fmt.Sprintf("once-%d-%d", h, i)] = []int32{h}
		}
		apps[fmt.Sprintf("twice-%d", h)] = []int32{h, int32(rng.IntN(1000))}
		if h%100 == 50 {
			apps[fmt.Sprintf("wallet-%d", h)] = []int32{h}
			fetched = append(fetched, blockHash(h))
		}
	}
	data := buildIndex(t, 0, 1000, apps, 0)
	ir, err := universe.NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r := analyzeWhole(t, ir, fetched)
	var max float64
	singles := 0
	for _, m := range r.Matched {
		if m.Appearances == 1 {
			singles++
			max = math.Max(max, m.Probability)
		}
	}
	t.Logf("%d matches of one appearance, %.3g of them the wallet's (%.3g-%.3g), each at most %.3g",
		singles, r.EstimatedWalletSingles, r.EstimatedWalletSinglesLow, r.EstimatedWalletSinglesHigh, max)
	if singles != 310 || max > 0.1 || r.EstimatedWalletSinglesLow > 10 || r.EstimatedWalletSinglesHigh < 10 {
		t.Errorf("%d singles at most %.3g; the wallet's estimated %.3g (%.3g-%.3g), want 10 inside, each below 0.1",
			singles, max, r.EstimatedWalletSingles, r.EstimatedWalletSinglesLow, r.EstimatedWalletSinglesHigh)
	}
}

// analyzeWhole runs the block-download attack on one session that scanned
// blocks 0..999 and fetched those given.
func analyzeWhole(t *testing.T, ir *universe.IndexReader, fetched []chainhash.Hash) *FetchReport {
	t.Helper()
	s := &capture.FetchSession{ID: "s", Client: "c", Blocks: fetched,
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StartHeight: 0, StopHash: blockHash(999)}}}
	reps, err := AnalyzeFetches([]*capture.FetchSession{s}, ir, FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return reps[0]
}

// TestFetchesAmbiguousPair: a payer sends its change back to one address,
// which then appears in every payment to the wallet's reused address, as
// often as it: the two are one group, ambiguous (one of them, not each,
// is the wallet's with the group's probability), and say so.
func TestFetchesAmbiguousPair(t *testing.T) {
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	var fetched []chainhash.Hash
	for _, h := range []int32{100, 300, 500, 700} {
		ix.AddTx("wallet", h, 3)
		ix.AddTx("payer-change", h, 3)
		fetched = append(fetched, blockHash(h))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 3000 {
		ix.AddTx(fmt.Sprintf("other-%04d", i), int32(rng.IntN(1000)), 4+rng.IntN(9))
		ix.AddTx(fmt.Sprintf("other-%04d", i), int32(rng.IntN(1000)), 4+rng.IntN(9))
	}
	hd := &universe.IndexHeader{Network: "regtest"}
	for h := range int32(1000) {
		hd.Hashes = append(hd.Hashes, blockHash(h))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	ir, err := universe.NewIndexReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r := analyzeWhole(t, ir, fetched)
	got := map[string]FetchMatch{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	w, c := got["wallet"], got["payer-change"]
	if w.Group == 0 || w.Group != c.Group {
		t.Fatalf("wallet in group %d, payer's change in %d: want one group", w.Group, c.Group)
	}
	g := r.Groups[w.Group-1]
	if !g.Ambiguous || g.Probability < 0.95 || !slices.Equal(w.AmbiguousWith, []string{"payer-change"}) || !slices.Equal(c.AmbiguousWith, []string{"wallet"}) ||
		!slices.ContainsFunc(r.Warnings, func(s string) bool { return strings.Contains(s, "same evidence") }) {
		t.Errorf("group %+v; wallet ambiguous with %v, change with %v; warnings %q", g, w.AmbiguousWith, c.AmbiguousWith, r.Warnings)
	}
}

// TestFetchReportDeterministic: one capture analyzed again gives the same
// bytes. The chance counts summed over the classes and over the fetched
// blocks' neighbours were summed in a map's order, so that their last
// digits, and the JSON, changed from run to run.
func TestFetchReportDeterministic(t *testing.T) {
	apps := map[string][]int32{}
	rng := rand.New(rand.NewPCG(31, 32))
	var fetched []chainhash.Hash
	for h := range int32(1000) {
		for i := range 5 + rng.IntN(40) {
			apps[fmt.Sprintf("once-%d-%d", h, i)] = []int32{h}
		}
		for k := range 2 + rng.IntN(5) {
			apps[fmt.Sprintf("more-%d-%d", h, k)] = []int32{h, h + 1 + int32(rng.IntN(9)), int32(rng.IntN(1000))}
		}
		if rng.IntN(7) == 0 {
			fetched = append(fetched, blockHash(h))
		}
	}
	data := buildIndex(t, 0, 1000, apps, 0)
	var first []byte
	for run := range 12 {
		ir, err := universe.NewIndexReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(analyzeWhole(t, ir, fetched))
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("run %d: %d bytes of JSON differ from run 0's %d", run, len(b), len(first))
		}
	}
}
