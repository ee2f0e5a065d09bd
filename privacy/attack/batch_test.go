package attack

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// mixedUniverse is a universe of every kind of line: hashes (some of them
// members of the wallet), addresses, public keys, marked key lines,
// scripts of one short push, one long push and several pushes, 32-byte
// hashes, comments and lines that are not candidates.
func mixedUniverse(rng *rand.Rand, size int, w *model.Wallet) string {
	addrs := w.Addresses(&chaincfg.MainNetParams)
	var b strings.Builder
	var h [20]byte
	for i := 0; i < size; i++ {
		randomBytes(rng, h[:])
		switch r := rng.IntN(100); {
		case r < 70:
			b.WriteString(hex.EncodeToString(h[:]))
		case r < 75:
			b.WriteString(hex.EncodeToString(w.Hashes[rng.IntN(len(w.Hashes))]))
		case r < 80:
			b.WriteString(addrs[rng.IntN(len(addrs))] + " # height 3")
		case r < 84:
			b.WriteString(hex.EncodeToString(w.PubKeys[rng.IntN(len(w.PubKeys))]))
		case r < 86:
			k := rng.IntN(len(w.PubKeys))
			fmt.Fprintf(&b, "%x # pair %s, listed %s", w.PubKeys[k], addrs[k], addrs[k])
		case r < 89:
			fmt.Fprintf(&b, "76a914%x88ac", h) // one 20-byte push
		case r < 91:
			long := make([]byte, 100)
			randomBytes(rng, long)
			fmt.Fprintf(&b, "4c64%x", long) // one push longer than bip37.MaxPreparedLen
		case r < 93:
			fmt.Fprintf(&b, "5121%x21%x52ae", w.PubKeys[0], w.PubKeys[len(w.PubKeys)-1]) // 1-of-2 multisig
		case r < 95:
			var h32 [32]byte
			randomBytes(rng, h32[:])
			b.WriteString(hex.EncodeToString(h32[:]))
		case r < 97:
			b.WriteString("# a comment")
		default:
			b.WriteString("not a candidate")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// mixedGroups are groups of one and several filters of the wallet: one
// filter sent twice, one that matches everything, one dense enough to
// match many candidates.
func mixedGroups(t testing.TB, w *model.Wallet) [][]*bip37.Filter {
	t.Helper()
	dense := bip37.NewFilter(20, 0.3, 9, wire.BloomUpdateNone)
	for _, e := range w.Hashes {
		dense.Add(e)
	}
	empty, err := bip37.NewFilterFromParams(nil, 5, 1, wire.BloomUpdateNone)
	if err != nil {
		t.Fatal(err)
	}
	f1, f2 := w.Filter(0.01, 10, 1), w.Filter(0.02, 0, 2)
	return [][]*bip37.Filter{{f1}, {f1, f2, f1}, {empty}, {dense, f2}, {empty, dense}, {f2}}
}

// TestAnalyzeGroupsBatchedEqualsOneByOne checks that testing candidates in
// batches changes nothing: every report equals, field by field, the one
// the candidate-at-a-time loop gives, for groups of one and several
// filters (one sent twice, one that matches everything, one dense enough
// to match many candidates), with and without the pair test, on one and
// several workers, with a match list that is cut short.
func TestAnalyzeGroupsBatchedEqualsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	w := model.NewWallet(5, 30)
	universe := mixedUniverse(rng, 5000, w)
	groups := mixedGroups(t, w)
	for _, tc := range []struct {
		name string
		opts AnalyzeOptions
	}{
		{"one worker", AnalyzeOptions{Workers: 1}},
		{"one worker, pair test, list cut", AnalyzeOptions{Workers: 1, PairTest: true, MaxMatches: 7}},
		{"three workers", AnalyzeOptions{Workers: 3}},
		{"three workers, pair test", AnalyzeOptions{Workers: 3, PairTest: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batched, err := AnalyzeGroups(groups, strings.NewReader(universe), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			batchCandidates = false
			defer func() { batchCandidates = true }()
			oneByOne, err := AnalyzeGroups(groups, strings.NewReader(universe), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for g := range groups {
				if !reflect.DeepEqual(batched[g], oneByOne[g]) {
					t.Errorf("group %d: batched\n%+v\none by one\n%+v", g+1, batched[g], oneByOne[g])
				}
			}
			if batched[0].MatchedCount == 0 || batched[3].MatchedCount < 50 {
				t.Fatalf("too few matches to compare: %d and %d", batched[0].MatchedCount, batched[3].MatchedCount)
			}
		})
	}
}

// TestAnalyzeManySessions is a synthetic capture: sessions from half as
// many wallets (each wallet reconnects once with a new tweak), all
// analyzed in one pass over a universe of random hashes that holds every
// wallet's used addresses. Every session must reveal all the used
// addresses of its wallet, and the false positives (matches that are not
// the wallet's) must lie within the model's 99% interval: their total
// over the sessions, and each session's count within the interval that
// gives all the sessions together 99%. 100 sessions over 10^5 lines by
// default; 1,000 sessions of 500 wallets over 10^6 lines with
// SPVFILTER_LONG=1.
func TestAnalyzeManySessions(t *testing.T) {
	sessions, lines := 100, 100_000
	if os.Getenv("SPVFILTER_LONG") == "1" {
		sessions, lines = 1000, 1_000_000
	}
	const keys, used = 20, 10 // each wallet's keys, and those used on chain
	// Filters sized for exactly the wallet's elements, so half full and at
	// their nominal rate: many false positives to count.
	const fpRate, extra = 0.0002, 0
	wallets := sessions / 2
	rng := rand.New(rand.NewPCG(uint64(sessions), 77))
	var groups [][]*bip37.Filter
	owner := map[string]int{} // used address -> wallet
	var usedAddrs []string
	for i := 0; i < wallets; i++ {
		w := model.NewWallet(uint64(1000+i), keys)
		for _, a := range w.Addresses(&chaincfg.MainNetParams)[:used] {
			owner[a] = i
			usedAddrs = append(usedAddrs, a)
		}
		groups = append(groups, []*bip37.Filter{w.Filter(fpRate, extra, rng.Uint32())},
			[]*bip37.Filter{w.Filter(fpRate, extra, rng.Uint32())})
	}
	universe, _ := testUniverse(rng, lines, usedAddrs)
	reps, err := AnalyzeGroups(groups, strings.NewReader(universe), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Each session's false positives against the model at its filter's
	// actual fill (X^k per candidate, X the fraction of bits set: the
	// report's ExpectedFalsePositives), within the interval that gives all
	// the sessions together 99%, and their total within its own 99%
	// interval. The fill of a small filter varies from one tweak to the
	// next, and its rate X^k far more (about 30% here), so a session is
	// not compared with the model at the expected fill.
	total, expected := 0, 0.0
	for s, r := range reps {
		if r.UniverseSize != uint64(lines) {
			t.Fatalf("session %d: %d candidates, want %d", s+1, r.UniverseSize, lines)
		}
		found, fp := 0, 0
		for _, m := range r.Matched {
			if i, ok := owner[m.Candidate]; ok && i == s/2 {
				found++
			} else {
				fp++
			}
		}
		if found != used {
			t.Errorf("session %d: %d of the wallet's %d used addresses found", s+1, found, used)
		}
		lo := int(poissonQuantile(0.005/float64(sessions), r.ExpectedFalsePositives))
		hi := int(poissonQuantile(1-0.005/float64(sessions), r.ExpectedFalsePositives))
		if fp < lo || fp > hi {
			t.Errorf("session %d: %d false positives, outside %d..%d (the model expects %.4g)", s+1, fp, lo, hi, r.ExpectedFalsePositives)
		}
		total += fp
		expected += r.ExpectedFalsePositives
	}
	lo, hi := int(poissonQuantile(0.005, expected)), int(poissonQuantile(0.995, expected))
	// The model at the expected fill (Evaluate), for a filter of this
	// wallet over this universe: the sessions' mean lies above it by the
	// spread of X^k (Jensen's inequality), a few percent here.
	mr, err := model.Evaluate(model.Params{Addresses: keys, FPRate: fpRate, ElementsPerAddress: 2, ExtraElements: extra,
		UniverseSize: uint64(lines) - used + keys})
	if err != nil {
		t.Fatal(err)
	}
	mean := expected / float64(sessions)
	t.Logf("%d sessions, %d lines: %d false positives in all, %.6g expected at the filters' fills (99%% interval %d..%d); "+
		"%.4g per session, the model at the expected fill %.4g", sessions, lines, total, expected, lo, hi, mean, mr.ExpectedFalsePositives)
	if total < lo || total > hi {
		t.Errorf("%d false positives over %d sessions, outside the model's 99%% interval %d..%d", total, sessions, lo, hi)
	}
	if math.Abs(mean/mr.ExpectedFalsePositives-1) > 0.1 {
		t.Errorf("%.4g false positives expected per session, the model at the expected fill %.4g: more than 10%% apart",
			mean, mr.ExpectedFalsePositives)
	}
}
