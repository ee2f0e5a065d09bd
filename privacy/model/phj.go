package model

import "math"

// MaxPHjPoints bounds the values of j that Result.PHCurve computes: every
// j up to a wallet of this many addresses, an even grid beyond.
const MaxPHjPoints = 1000

// PHj is the attacker's confidence in naming j of the wallet's N
// addresses: the probability that j addresses picked at random among the
// matching ones are all the wallet's, C(N, j)/C(N+S, j) for S false
// positives (Gervais et al.'s P_h(j); P_h(1) and P_h(N) are its ends).
type PHj struct {
	J uint32 `json:"j"`
	// PH is P_h(j) at the expected false positives S, the papers'
	// formula, with the binomial coefficient extended to real S by the
	// Gamma function: the product over i < j of (N-i)/(N+S-i).
	PH float64 `json:"p_h"`
	// PHExact is P_h(j) averaged over the binomial number of false
	// positives instead of taken at its mean S.
	PHExact float64 `json:"p_h_exact"`
}

// PHCurve returns P_h(j) after the first b of the result's filters (b from
// 1 to Params.Filters; 0 means all of them) for j = 1, ..., N: every j
// when N is at most MaxPHjPoints, else MaxPHjPoints values of j spread
// evenly from 1 to N. Its ends are the step's P_h(1), P_h(N) and their
// expectations, to the bit (for one address its single point is P_h(1)).
// It returns nil for b beyond the filters.
//
// The expectation costs a sum over the binomial number of false positives
// for every j (up to 4,097 terms each), so Evaluate leaves it out.
func (r *Result) PHCurve(b uint32) []PHj {
	if b == 0 {
		b = uint32(len(r.Steps))
	}
	if b < 1 || int(b) > len(r.Steps) {
		return nil
	}
	st := r.Steps[b-1]
	n := float64(r.Params.Addresses)
	others := float64(r.Params.UniverseSize - uint64(r.Params.Addresses))
	js := curveJs(r.Params.Addresses)
	out := make([]PHj, len(js))
	// ln(N!/(N-j)!), shared by every number of false positives.
	logFalling := make([]float64, len(js))
	for i, j := range js {
		logFalling[i] = lgammaRise(n-float64(j)+1, float64(j))
		out[i] = PHj{J: j, PH: probFirstReal(n, st.ExpectedFalsePositives, j, logFalling[i])}
	}
	q := st.PfCandidate
	switch {
	case q <= 0 || others <= 0:
		for i := range out {
			out[i].PHExact = 1
		}
	case q >= 1:
		for i, j := range js {
			out[i].PHExact = probFirstReal(n, others, j, logFalling[i])
		}
	default:
		mass := binomialTerms(others, q, func(fp, w float64) {
			for i, j := range js {
				out[i].PHExact += w * probFirstReal(n, fp, j, logFalling[i])
			}
		})
		for i := range out {
			out[i].PHExact /= mass
		}
	}
	return out
}

// curveJs returns the values of j of a curve for a wallet of n addresses.
func curveJs(n uint32) []uint32 {
	if n <= MaxPHjPoints {
		js := make([]uint32, n)
		for i := range js {
			js[i] = uint32(i + 1)
		}
		return js
	}
	js := make([]uint32, MaxPHjPoints)
	for i := range js {
		js[i] = 1 + uint32(math.Round(float64(i)*float64(n-1)/(MaxPHjPoints-1)))
	}
	return js
}

// probFirstReal is P_h(j) = C(n, j)/C(n+s, j): that j of n real items mixed
// with s false ones, drawn without replacement, are all real. At j = 1 and
// j = n it is n/(n+s) and ProbAllReal, as the model computes them; between,
// the ratio of two falling factorials, exp(ln n!/(n-j)! - ln (n+s)!/(n+s-j)!),
// each from lgammaRise; logFalling is the first, ln n!/(n-j)!.
func probFirstReal(n, s float64, j uint32, logFalling float64) float64 {
	switch {
	case s <= 0:
		return 1
	case j == 1:
		return n / (n + s)
	case float64(j) == n:
		return ProbAllReal(n, s)
	}
	jf := float64(j)
	return math.Exp(logFalling - lgammaRise(n+s-jf+1, jf))
}
