package leak

import (
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// BloomLeak is what the BIP 37 filters a peer received reveal of the
// wallet's scripts: the filter attack (privacy/attack's Analyze) with the
// wallet's size known.
type BloomLeak struct {
	// Filters counts the filters the peer received (filterload, each
	// reload), FalsePositiveRate is the chance another script matches
	// them all (model.JointFalsePositiveRate).
	Filters           int     `json:"filter_count"`
	FalsePositiveRate float64 `json:"false_positive_rate"`
	// UniverseSize is U, the candidates the attacker tests, and
	// ExpectedFalsePositives S = (U-N)·rate, the others' matches.
	UniverseSize           uint64  `json:"universe_size"`
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	// PH1 is P_h(1) = N/(N+S), the chance a match is the wallet's, and
	// PHAll P_h(N) = 1/C(N+S, N), that N matches drawn are all the
	// wallet's (model.ProbAllReal), for N the watched scripts.
	PH1   float64 `json:"p_h_1"`
	PHAll float64 `json:"p_h_all"`
}

// Bloom is the filter attack's P_h on the filters a peer received, for a
// wallet of watched scripts among universeSize candidates (0: the
// model's default universe, model.DefaultParams().UniverseSize).
func Bloom(filters []*bip37.Filter, watched int, universeSize uint64) BloomLeak {
	if universeSize == 0 {
		universeSize = model.DefaultParams().UniverseSize
	}
	b := BloomLeak{Filters: len(filters), FalsePositiveRate: model.JointFalsePositiveRate(filters), UniverseSize: universeSize}
	n := float64(watched)
	others := max(float64(universeSize)-n, 0)
	b.ExpectedFalsePositives = others * b.FalsePositiveRate
	if watched > 0 {
		b.PH1 = n / (n + b.ExpectedFalsePositives)
		b.PHAll = model.ProbAllReal(n, b.ExpectedFalsePositives)
	}
	return b
}
