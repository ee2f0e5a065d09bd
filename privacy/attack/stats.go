package attack

import "math"

// This file holds the few special functions the attacks need (see the
// package documentation for where each is used): the Poisson distribution
// in log space, its quantiles, the regularized incomplete gamma function,
// and integrals of Poisson likelihoods over the priors of wallet sizes.

// level is the confidence of every interval the package gives.
const level = 0.95

// logPoisson is the log probability of k events at mean lambda.
func logPoisson(k, lambda float64) float64 {
	switch {
	case lambda <= 0 && k == 0:
		return 0
	case lambda <= 0:
		return math.Inf(-1)
	case k == 0:
		return -lambda
	}
	lg, _ := math.Lgamma(k + 1)
	return k*math.Log(lambda) - lambda - lg
}

// logNegBinomial is the log probability of k events for a Poisson count
// whose mean is itself uncertain, with mean m and variance v ≥ m (a
// gamma-distributed mean): the Poisson when v is m.
func logNegBinomial(k, m, v float64) float64 {
	if m <= 0 || v <= m*(1+1e-9) {
		return logPoisson(k, m)
	}
	r := m * m / (v - m) // the gamma's shape
	a, _ := math.Lgamma(k + r)
	b, _ := math.Lgamma(r)
	c, _ := math.Lgamma(k + 1)
	return a - b - c + r*math.Log(r/(r+m)) + k*math.Log(m/(r+m))
}

// regGammaP is the regularized lower incomplete gamma function P(a, x),
// the probability that a gamma variable of shape a and scale 1 is at most
// x: by its power series below a+1, by its continued fraction above
// (Abramowitz and Stegun 6.5.29 and 6.5.31).
func regGammaP(a, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	case x < a+1:
		return gammaSeries(a, x)
	}
	return 1 - gammaFraction(a, x)
}

// gammaSeries is P(a, x) by its series, for x < a+1.
func gammaSeries(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	term := 1 / a
	sum := term
	for n := 1.0; n < 100_000; n++ {
		term *= x / (a + n)
		sum += term
		if term < sum*1e-16 {
			break
		}
	}
	return math.Min(1, sum*math.Exp(-x+a*math.Log(x)-lg))
}

// gammaFraction is Q(a, x) = 1 - P(a, x) by its continued fraction, for
// x ≥ a+1, evaluated by the modified Lentz method.
func gammaFraction(a, x float64) float64 {
	const tiny = 1e-300
	lg, _ := math.Lgamma(a)
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1.0; i < 100_000; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return math.Min(1, math.Exp(-x+a*math.Log(x)-lg)*h)
}

// poissonCDF is the probability that a Poisson count of mean lambda is
// at most k.
func poissonCDF(k, lambda float64) float64 {
	if k < 0 {
		return 0
	}
	if lambda <= 0 {
		return 1
	}
	return 1 - regGammaP(math.Floor(k)+1, lambda)
}

// poissonQuantile is the smallest count q with P(X ≤ q) ≥ p for a Poisson
// X of mean lambda.
func poissonQuantile(p, lambda float64) float64 {
	if lambda <= 0 || p <= 0 {
		return 0
	}
	if lambda > 1e5 {
		// The normal approximation with its skew term (Cornish–Fisher):
		// within a count of the quantile at this mean (a deviation of
		// 316 counts), where the series would need thousands of terms.
		z := normalQuantile(p)
		return math.Max(0, math.Round(lambda+z*math.Sqrt(lambda)+(z*z-1)/6))
	}
	// Bisection between counts far enough out in both tails.
	sd := math.Sqrt(lambda)
	lo := math.Max(0, math.Floor(lambda-10*sd-10)) // P(X ≤ lo) < p, or lo is 0
	hi := math.Ceil(lambda + 10*sd + 10)
	for poissonCDF(hi, lambda) < p {
		hi += hi
	}
	if poissonCDF(lo, lambda) >= p {
		return lo
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if poissonCDF(mid, lambda) >= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// normalQuantile is the standard normal's quantile at p, by bisection on
// its distribution function.
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 100 {
		mid := (lo + hi) / 2
		if math.Erfc(-mid/math.Sqrt2)/2 < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// poissonRange is the central interval of a Poisson count of mean
// lambda at the package's level: each tail outside it holds at most
// (1-level)/2.
func poissonRange(lambda float64) (lo, hi float64) {
	tail := (1 - level) / 2
	// The quantile at tail is the largest lo with P(X < lo) < tail, the
	// one at 1-tail the smallest hi with P(X > hi) ≤ tail.
	return poissonQuantile(tail, lambda), poissonQuantile(1-tail, lambda)
}

// gammaQuantile is x with P(a, x) = p, by bisection.
func gammaQuantile(p, a float64) float64 {
	if a <= 0 || p <= 0 {
		return 0
	}
	lo, hi := 0.0, a+10*math.Sqrt(a)+20
	for regGammaP(a, hi) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if regGammaP(a, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

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

// rangeLevel is the probability that a Poisson count of mean lambda lies
// in its central range (poissonRange): the coverage of walletRange's
// interval, at least the package's level, more when the mean is small
// (no range of whole counts holds exactly 95%).
func rangeLevel(lambda float64) float64 {
	lo, hi := poissonRange(lambda)
	return poissonCDF(hi, lambda) - poissonCDF(lo-1, lambda)
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
