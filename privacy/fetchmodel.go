package privacy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// FetchSide is the block-download attack on a BIP 157 client, modelled: a
// script of the universe that appears in k blocks is matched when the
// client fetched all of them. The wallet's scripts always are; another
// script, whose blocks are as if drawn at random, is with probability
// C(B-k, F-k)/C(B, F).
type FetchSide struct {
	// Appearances is k, the blocks each script appears in (a receive and
	// its spend: 2); Decoys the random blocks the client fetches per real
	// one; Peers the peers it spreads its downloads over at random (the
	// attacker runs one).
	Appearances uint32  `json:"appearances"`
	Decoys      float64 `json:"decoys"`
	Peers       uint32  `json:"peers"`
	// FetchedBlocks is F: the wallet's blocks (at least k) and the filter
	// false positives, times 1+Decoys, divided among the Peers; the
	// attacker's peer sees F of the B blocks, FetchedFraction f = F/B.
	FetchedBlocks   float64 `json:"fetched_blocks"`
	FetchedFraction float64 `json:"fetched_fraction"`
	// ChancePerCandidate is C(B-k, F-k)/C(B, F) (F rounded to a whole
	// number), ChancePerCandidateApprox f^k.
	ChancePerCandidate       float64 `json:"chance_per_candidate"`
	ChancePerCandidateApprox float64 `json:"chance_per_candidate_approx"`
	// ExpectedFalsePositives is (U-N)·ChancePerCandidate; WalletExposed
	// the wallet's scripts whose k blocks all went to the attacker's
	// peer, N·(1/Peers)^k.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	WalletExposed          float64 `json:"wallet_exposed"`
	// PH1 is W/(W+S), a matched script is the wallet's; PHAll is
	// 1/C(W+S, W), all W are identified.
	PH1   float64 `json:"p_h_1"`
	PHAll float64 `json:"p_h_all"`
}

// fetchSide evaluates the block-download attack for the comparison.
func fetchSide(p CompareParams, fpBlocks float64) (FetchSide, error) {
	switch {
	case p.Appearances == 0:
		return FetchSide{}, fmt.Errorf("%w: appearances per address must be at least 1", ErrBadModel)
	case !(p.Decoys >= 0) || math.IsInf(p.Decoys, 0):
		return FetchSide{}, fmt.Errorf("%w: decoys per real block must be a number at least 0", ErrBadModel)
	case p.Peers == 0:
		return FetchSide{}, fmt.Errorf("%w: peers must be at least 1", ErrBadModel)
	}
	k := uint64(p.Appearances)
	b := float64(p.Blocks)
	real := math.Max(float64(p.WalletBlocks), float64(k))
	f := math.Min(b, (real+fpBlocks)*(1+p.Decoys)) / float64(p.Peers)
	n := float64(p.Model.Addresses)
	s := FetchSide{Appearances: p.Appearances, Decoys: p.Decoys, Peers: p.Peers, FetchedBlocks: f, FetchedFraction: f / b}
	s.ChancePerCandidate = ChanceAllFetched(p.Blocks, uint64(math.Round(f)), k)
	s.ChancePerCandidateApprox = math.Pow(s.FetchedFraction, float64(k))
	s.ExpectedFalsePositives = math.Max(float64(p.Model.UniverseSize)-n, 0) * s.ChancePerCandidate
	s.WalletExposed = n * math.Pow(1/float64(p.Peers), float64(k))
	if s.WalletExposed+s.ExpectedFalsePositives > 0 {
		s.PH1 = s.WalletExposed / (s.WalletExposed + s.ExpectedFalsePositives)
	}
	s.PHAll = ProbAllReal(s.WalletExposed, s.ExpectedFalsePositives)
	return s, nil
}

// FetchTrial is what one simulated block-download attack found.
type FetchTrial struct {
	WalletMatched int // the wallet's scripts matched: all of them
	Spurious      int // other scripts with every block fetched
}

// SimulateFetches measures the block-download attack on a synthetic chain:
// B blocks, a wallet of n scripts each in k distinct random blocks, others
// more scripts each in k random blocks, and a client that fetches the
// wallet's blocks and decoys random other blocks per real one (rounded
// down). It counts the scripts whose every block was fetched.
func SimulateFetches(rng *rand.Rand, blocks, n, others, k int, decoys float64) FetchTrial {
	fetched := make([]bool, blocks)
	pick := func(dst []int) []int {
		dst = dst[:0]
		for len(dst) < k {
			h := rng.IntN(blocks)
			dup := false
			for _, x := range dst {
				dup = dup || x == h
			}
			if !dup {
				dst = append(dst, h)
			}
		}
		return dst
	}
	var hs []int
	real := 0
	for i := 0; i < n; i++ {
		for _, h := range pick(hs) {
			if !fetched[h] {
				fetched[h] = true
				real++
			}
		}
	}
	want := real + int(float64(real)*decoys)
	if want > blocks {
		want = blocks
	}
	for got := real; got < want; {
		if h := rng.IntN(blocks); !fetched[h] {
			fetched[h] = true
			got++
		}
	}
	tr := FetchTrial{WalletMatched: n}
	for i := 0; i < others; i++ {
		all := true
		for _, h := range pick(hs) {
			all = all && fetched[h]
		}
		if all {
			tr.Spurious++
		}
	}
	return tr
}
