package attack

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/capture"
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

// buildIndex writes an index of the appearances; the writer sorts them.
func buildIndex(t *testing.T, first int32, nblocks int, apps map[string][]int32, memory int) []byte {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), memory)
	defer ix.Close()
	for c, hs := range apps {
		for _, h := range hs {
			ix.Add(c, h)
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
	if len(r.Warnings) != 2 || !strings.Contains(r.Warnings[0], "not in the index's chain") || !strings.Contains(r.Warnings[1], "appear in a single block") {
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
