package model

import (
	"math"
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
	Appearances uint32  `json:"appearance_count"`
	Decoys      float64 `json:"decoys_per_real_block"`
	Peers       uint32  `json:"peer_count"`
	// FetchedBlocks is F: the wallet's blocks (at least k) and the filter
	// false positives, times 1+Decoys, divided among the Peers; the
	// attacker's peer sees F of the B blocks, FetchedFraction f = F/B.
	FetchedBlocks   float64 `json:"expected_blocks_fetched"`
	FetchedFraction float64 `json:"fetched_fraction"`
	// ChancePerCandidate is C(B-k, F-k)/C(B, F) (F rounded to a whole
	// number), ChancePerCandidateApprox f^k.
	ChancePerCandidate       float64 `json:"chance_per_candidate"`
	ChancePerCandidateApprox float64 `json:"chance_per_candidate_approx"`
	// ExpectedFalsePositives is (U-N)·ChancePerCandidate; WalletExposed
	// the wallet's scripts whose k blocks all went to the attacker's
	// peer, N·(1/Peers)^k.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	WalletExposed          float64 `json:"expected_wallet_exposed"`
	// PH1 is W/(W+S), a matched script is the wallet's; PHAll is
	// 1/C(W+S, W), all W are identified.
	PH1   float64 `json:"p_h_1"`
	PHAll float64 `json:"p_h_all"`
}

// fetchSide evaluates the block-download attack for the comparison.
func fetchSide(p CompareParams, fpBlocks float64) (FetchSide, error) {
	switch {
	case p.Appearances == 0:
		return FetchSide{}, outOf("appearances", p.Appearances, WholeAtLeast(1))
	case !(p.Decoys >= 0) || math.IsInf(p.Decoys, 0):
		return FetchSide{}, outOf("decoys", p.Decoys, NumberAtLeast(0))
	case p.Peers == 0:
		return FetchSide{}, outOf("peer_count", p.Peers, WholeAtLeast(1))
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

// ChanceAllFetched is the probability that k given blocks all lie among F
// blocks drawn at random without replacement from B: C(B-k, F-k)/C(B, F) =
// ∏_{i<k} (F-i)/(B-i), computed in log space. It is 0 when k > F.
func ChanceAllFetched(b, f, k uint64) float64 {
	if k > f || f > b {
		return 0
	}
	return math.Exp(logChanceAllFetched(b, f, k))
}

func logChanceAllFetched(b, f, k uint64) float64 {
	if k == 0 {
		return 0
	}
	// lgamma keeps large k exact to rounding without a k-step loop.
	lg := func(x uint64) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	if k <= 64 {
		s := 0.0
		for i := uint64(0); i < k; i++ {
			s += math.Log(float64(f-i)) - math.Log(float64(b-i))
		}
		return s
	}
	return lg(f) - lg(f-k) - lg(b) + lg(b-k)
}
