package model

import (
	"math"
	"math/rand/v2"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// defaultMonteCarloSample is the number of outside candidates one trial
// tests when MonteCarloOptions.Sample is zero and the universe is larger;
// the count found is scaled up to the universe.
const defaultMonteCarloSample = 1_000_000

// monteCarloZ is the normal quantile of the two-sided 99% interval.
const monteCarloZ = 2.5758293035489

// MonteCarloOptions tune MonteCarlo.
type MonteCarloOptions struct {
	Trials int
	// Sample is the number of outside candidates tested per trial; 0 means
	// all UniverseSize-Addresses of them, at most defaultMonteCarloSample.
	Sample uint64
	// Seed makes the run reproducible.
	Seed uint64
}

// MonteCarloResult compares measured false positives with the model.
type MonteCarloResult struct {
	Trials             int     `json:"trial_count"`
	CandidatesPerTrial uint64  `json:"candidates_per_trial"`
	FalsePositivesSeen uint64  `json:"false_positives_seen"`
	MeasuredPf         float64 `json:"measured_candidate_false_positive_rate"`
	ModelPf            float64 `json:"expected_candidate_false_positive_rate"`
	// MeanFalsePositives is the mean over trials of the false positives
	// found, scaled to the UniverseSize-Addresses outside candidates.
	MeanFalsePositives  float64 `json:"measured_false_positives"`
	ModelFalsePositives float64 `json:"expected_false_positives"`
	// CILow and CIHigh bound the 99% confidence interval of the mean: its
	// standard error is the larger of the between-trial one and the
	// Poisson one of the pooled count (so a run with few hits still gets a
	// fair interval).
	CILow  float64 `json:"ci99_low"`
	CIHigh float64 `json:"ci99_high"`
	Agrees bool    `json:"agrees"`
	// MeasuredPH1 is the mean over trials of N/(N+S_trial).
	MeasuredPH1 float64 `json:"measured_p_h_1"`
	ModelPH1    float64 `json:"expected_p_h_1"`
	// WalletMissed counts wallet elements a filter failed to match: a
	// Bloom filter has no false negatives, so it must be 0.
	WalletMissed int `json:"wallet_missed"`
}

// MonteCarlo builds real filters with bip37 for random wallets of
// p.Addresses addresses (p.ElementsPerAddress random elements each, sized
// by p.Sizing with p.ExtraElements extra, p.Filters filters with
// independent tweaks),
// tests random outside candidates against them (one 20-byte element, or a
// 33-byte and a 20-byte element that must both match under the pair test)
// and compares the false positives found with Evaluate.
func MonteCarlo(p Params, opts MonteCarloOptions) (*MonteCarloResult, error) {
	model, err := Evaluate(p)
	if err != nil {
		return nil, err
	}
	p = model.Params
	if opts.Trials < 2 {
		return nil, outOf("trials", opts.Trials, WholeAtLeast(2))
	}
	if model.Elements > 1_000_000 {
		return nil, badField("addresses", p.Addresses, "Monte Carlo builds at most 1000000 wallet elements, not %d", model.Elements)
	}
	if opts.Trials > 1_000_000 {
		return nil, outOf("trials", opts.Trials, WholeAtMost(1_000_000))
	}
	others := p.UniverseSize - uint64(p.Addresses)
	sample := opts.Sample
	if sample == 0 {
		sample = min(others, defaultMonteCarloSample)
	}
	if sample == 0 || sample > others {
		return nil, badField("sample", sample, "more than the %d candidates outside the wallet", others)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	res := &MonteCarloResult{
		Trials: opts.Trials, CandidatesPerTrial: sample,
		ModelPf: model.PfCandidate, ModelFalsePositives: model.ExpectedFalsePositives, ModelPH1: model.PH1,
	}
	scale := float64(others) / float64(sample)
	n := float64(p.Addresses)
	var sum, sumSq, sumPH1 float64
	var elem [33]byte
	var hash [20]byte
	filters := make([]*bip37.Filter, p.Filters)
	wallet := make([][]byte, 0, int(p.Addresses*p.ElementsPerAddress))
	for t := 0; t < opts.Trials; t++ {
		wallet = wallet[:0]
		for i := uint32(0); i < p.Addresses*p.ElementsPerAddress; i++ {
			size := 20
			if i%2 == 0 {
				size = 33
			}
			e := make([]byte, size)
			randomBytes(rng, e)
			wallet = append(wallet, e)
		}
		for b := range filters {
			f := p.Sizing.NewFilter(uint32(model.SizingElements), p.FPRate, rng.Uint32(), wire.BloomUpdateNone)
			for _, e := range wallet {
				f.Add(e)
			}
			for _, e := range wallet {
				if !f.Contains(e) {
					res.WalletMissed++
				}
			}
			filters[b] = f
		}
		var hits uint64
		for c := uint64(0); c < sample; c++ {
			randomBytes(rng, hash[:])
			if p.PairTest {
				randomBytes(rng, elem[:])
			}
			match := true
			for _, f := range filters {
				if !f.Contains(hash[:]) || p.PairTest && !f.Contains(elem[:]) {
					match = false
					break
				}
			}
			if match {
				hits++
			}
		}
		res.FalsePositivesSeen += hits
		s := float64(hits) * scale
		sum += s
		sumSq += s * s
		sumPH1 += n / (n + s)
	}
	T := float64(opts.Trials)
	res.MeanFalsePositives = sum / T
	res.MeasuredPH1 = sumPH1 / T
	res.MeasuredPf = float64(res.FalsePositivesSeen) / (T * float64(sample))
	variance := math.Max(sumSq/T-res.MeanFalsePositives*res.MeanFalsePositives, 0) * T / (T - 1)
	seTrials := math.Sqrt(variance / T)
	sePoisson := math.Sqrt(float64(res.FalsePositivesSeen)+1) * scale / T
	se := math.Max(seTrials, sePoisson)
	res.CILow = math.Max(res.MeanFalsePositives-monteCarloZ*se, 0)
	res.CIHigh = res.MeanFalsePositives + monteCarloZ*se
	res.Agrees = res.CILow <= res.ModelFalsePositives && res.ModelFalsePositives <= res.CIHigh
	return res, nil
}
