package lab

import "math"

// tail is the probability left out on each side of a count's interval:
// a 99.9% interval.
const tail = 0.0005

// poissonMax is the largest expected count whose interval is taken from
// the Poisson quantiles; beyond, the normal approximation is close.
const poissonMax = 500

// zTail is the standard normal quantile of 1 - tail.
const zTail = 3.2905267314919255

// countInterval returns the 99.9% interval of a count of matches whose
// expected value is mu and variance v: a sum of independent Bernoulli
// trials (a Poisson-binomial count). Up to poissonMax it takes the exact
// quantiles of the Poisson law of mean mu, whose spread bounds the
// binomial's; beyond, mu ± zTail·sqrt(v).
func countInterval(mu, v float64) (lo, hi int) {
	if mu <= 0 {
		return 0, 0
	}
	if mu > poissonMax {
		d := zTail * math.Sqrt(v)
		return int(math.Floor(mu - d)), int(math.Ceil(mu + d))
	}
	// Walk the Poisson probabilities from 0: P(0) = e^-mu, P(k) =
	// P(k-1)·mu/k. Up to poissonMax, e^-mu stays a normal float (e^-745 would not).
	p := math.Exp(-mu)
	cdf := p
	k := 0
	for cdf <= tail {
		k++
		p *= mu / float64(k)
		cdf += p
	}
	lo = k // P(X < lo) <= tail
	for cdf < 1-tail {
		k++
		p *= mu / float64(k)
		cdf += p
	}
	return lo, k // P(X > hi) <= tail
}
