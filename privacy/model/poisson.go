package model

import "math"

// This file holds the Poisson distribution in log space, its quantiles
// and central ranges, and the regularized incomplete gamma function: the
// special functions the attacks' intervals rest on (privacy/attack,
// privacy/leak).

// Level is the confidence of every interval PoissonRange and the attacks
// built on it give.
const Level = 0.95

// LogPoisson is the log probability of k events at mean lambda.
func LogPoisson(k, lambda float64) float64 {
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

// LogNegBinomial is the log probability of k events for a Poisson count
// whose mean is itself uncertain, with mean m and variance v ≥ m (a
// gamma-distributed mean): the Poisson when v is m.
func LogNegBinomial(k, m, v float64) float64 {
	if m <= 0 || v <= m*(1+1e-9) {
		return LogPoisson(k, m)
	}
	r := m * m / (v - m) // the gamma's shape
	a, _ := math.Lgamma(k + r)
	b, _ := math.Lgamma(r)
	c, _ := math.Lgamma(k + 1)
	return a - b - c + r*math.Log(r/(r+m)) + k*math.Log(m/(r+m))
}

// RegGammaP is the regularized lower incomplete gamma function P(a, x),
// the probability that a gamma variable of shape a and scale 1 is at most
// x: by its power series below a+1, by its continued fraction above
// (Abramowitz and Stegun 6.5.29 and 6.5.31).
func RegGammaP(a, x float64) float64 {
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

// GammaQuantile is x with P(a, x) = p (RegGammaP), by bisection: the
// quantile p of a gamma variable of shape a and scale 1, 0 for a or p at
// most 0.
func GammaQuantile(p, a float64) float64 {
	if a <= 0 || p <= 0 {
		return 0
	}
	lo, hi := 0.0, a+10*math.Sqrt(a)+20
	for RegGammaP(a, hi) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if RegGammaP(a, mid) < p {
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

// PoissonCDF is the probability that a Poisson count of mean lambda is
// at most k.
func PoissonCDF(k, lambda float64) float64 {
	if k < 0 {
		return 0
	}
	if lambda <= 0 {
		return 1
	}
	return 1 - RegGammaP(math.Floor(k)+1, lambda)
}

// PoissonQuantile is the smallest count q with P(X ≤ q) ≥ p for a Poisson
// X of mean lambda.
func PoissonQuantile(p, lambda float64) float64 {
	if lambda <= 0 || p <= 0 {
		return 0
	}
	if lambda > 1e5 {
		// The normal approximation with its skew term (Cornish–Fisher):
		// within a count of the quantile at this mean (a deviation of
		// 316 counts), where the series would need thousands of terms.
		z := NormalQuantile(p)
		return math.Max(0, math.Round(lambda+z*math.Sqrt(lambda)+(z*z-1)/6))
	}
	// Bisection between counts far enough out in both tails.
	sd := math.Sqrt(lambda)
	lo := math.Max(0, math.Floor(lambda-10*sd-10)) // P(X ≤ lo) < p, or lo is 0
	hi := math.Ceil(lambda + 10*sd + 10)
	for PoissonCDF(hi, lambda) < p {
		hi += hi
	}
	if PoissonCDF(lo, lambda) >= p {
		return lo
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if PoissonCDF(mid, lambda) >= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// NormalQuantile is the standard normal's quantile at p, by bisection on
// its distribution function.
func NormalQuantile(p float64) float64 {
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

// PoissonRange is the central interval of a Poisson count of mean lambda
// at Level: each tail outside it holds at most (1-Level)/2.
func PoissonRange(lambda float64) (lo, hi float64) {
	tail := (1 - Level) / 2
	// The quantile at tail is the largest lo with P(X < lo) < tail, the
	// one at 1-tail the smallest hi with P(X > hi) ≤ tail.
	return PoissonQuantile(tail, lambda), PoissonQuantile(1-tail, lambda)
}

// PoissonRangeLevel is the probability that a Poisson count of mean
// lambda lies in its central range (PoissonRange): the coverage of an
// interval made from that range, at least Level, more when the mean is
// small (no range of whole counts holds exactly 95%).
func PoissonRangeLevel(lambda float64) float64 {
	lo, hi := PoissonRange(lambda)
	return PoissonCDF(hi, lambda) - PoissonCDF(lo-1, lambda)
}

// wilsonZ is the normal quantile of a two-sided 95% interval.
const wilsonZ = 1.959963984540054

// Wilson returns the 95% Wilson score interval of a proportion of k
// successes in n trials (0 and 1 for n = 0): the interval of every calibration
// figure, and of the shares a client estimates from a sample (privacy/leak).
func Wilson(k, n int) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := wilsonZ * wilsonZ
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := wilsonZ / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(0, center-half), min(1, center+half)
}
