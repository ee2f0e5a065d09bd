package attack

import (
	"math"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// This file holds the few special functions the attacks need (see the
// package documentation for where each is used): integrals of Poisson
// likelihoods over the priors of wallet sizes, and wallet ranges; the
// Poisson distribution itself is privacy/model's.

// The Poisson functions the attacks share live in privacy/model.
var (
	logPoisson      = model.LogPoisson
	logNegBinomial  = model.LogNegBinomial
	poissonCDF      = model.PoissonCDF
	poissonQuantile = model.PoissonQuantile
	normalQuantile  = model.NormalQuantile
	poissonRange    = model.PoissonRange
	gammaQuantile   = model.GammaQuantile
	rangeLevel      = model.PoissonRangeLevel
)

// level is the confidence of every interval the package gives.
const level = model.Level

// garwood is the exact (Garwood) interval at the package's level for the
// mean of a Poisson count observed as k (which may be fractional, an
// expected count).
func garwood(k float64) (lo, hi float64) {
	tail := (1 - level) / 2
	if k > 0 {
		lo = gammaQuantile(tail, k)
	}
	return lo, gammaQuantile(1-tail, k+1)
}

// walletRange is the interval for a wallet's size n in matched = n + X,
// X a Poisson count of known mean chance: n lies in
// [matched - hi, matched - lo] for [lo, hi] the central range of X,
// cut at zero.
func walletRange(matched, chance float64) (lo, hi float64) {
	xlo, xhi := poissonRange(chance)
	return math.Max(0, matched-xhi), math.Max(0, matched-xlo)
}

// Gauss–Legendre nodes and weights of order 8 on [-1, 1] (Abramowitz and
// Stegun, table 25.4), symmetric: the positive half.
var (
	glNodes   = [4]float64{0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363}
	glWeights = [4]float64{0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763}
)

// yWeight is a log density over y, the log of one plus a size: a
// normal of mean mu and deviation sigma when sigma > 0, times e^(-decay·y),
// plus offset.
type yWeight struct {
	decay, mu, sigma, offset float64
}

func (w *yWeight) at(y float64) float64 {
	l := w.offset - w.decay*y
	if w.sigma > 0 {
		d := (y - w.mu) / w.sigma
		l -= d * d / 2
	}
	return l
}

// poissonIntegral is the log of ∫ P(k; base + e^y)·e^(w(y)) dy over y in
// [y0, y1], and the mean and mean square of y under the integrand: the
// likelihood of a count k of mean base plus a part of unknown size s,
// e^y = s + 1 - (base's own offset), integrated over the part's prior,
// and the part's posterior moments. The integrand is negligible outside a
// window of twelve Poisson deviations around its peak, which eight
// Gauss–Legendre panels of eight points integrate (any prior varying over
// a tenth of a unit of y or more is resolved).
func poissonIntegral(k, base float64, w yWeight, y0, y1 float64) (logI, m1, m2 float64) {
	none := math.Inf(-1)
	if y1 <= y0 {
		return none, 0, 0
	}
	lamLo := base + math.Exp(y0)
	lamHi := base + math.Exp(y1)
	peak := math.Max(k, lamLo)
	width := 12*math.Sqrt(peak+1) + 40
	a := math.Max(lamLo, k-width)
	b := math.Min(lamHi, peak+width)
	ya, yb := y0, y1
	if a > lamLo {
		ya = math.Log(a - base)
	}
	if b < lamHi {
		yb = math.Log(b - base)
	}
	if yb <= ya {
		return none, 0, 0
	}
	const panels = 8
	var ys, logs, wts [panels * 8]float64
	max := none
	h := (yb - ya) / panels
	lg, _ := math.Lgamma(k + 1)
	n := 0
	for p := range panels {
		mid := ya + (float64(p)+0.5)*h
		for i, x := range glNodes {
			for _, sign := range [2]float64{-1, 1} {
				y := mid + sign*x*h/2
				lam := base + math.Exp(y)
				l := w.at(y) - lam - lg
				if k > 0 {
					l += k * math.Log(lam)
				}
				ys[n], logs[n], wts[n] = y, l, glWeights[i]*h/2
				max = math.Max(max, l)
				n++
			}
		}
	}
	if math.IsInf(max, -1) || math.IsNaN(max) {
		return none, 0, 0
	}
	var sum float64
	for i := range n {
		v := wts[i] * math.Exp(logs[i]-max)
		sum += v
		m1 += v * ys[i]
		m2 += v * ys[i] * ys[i]
	}
	return max + math.Log(sum), m1 / sum, m2 / sum
}

// logAddExp is log(e^a + e^b).
func logAddExp(a, b float64) float64 {
	switch {
	case math.IsInf(a, -1):
		return b
	case math.IsInf(b, -1):
		return a
	case a > b:
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}
