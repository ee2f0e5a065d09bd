package attack

import "math"

// unseenPriors is the prior of one wallet for pairs of unseen sessions
// (see unseenPrior).
type unseenPriors struct {
	// unseen marks, by index among the linked sessions, those whose own
	// matches do not show a wallet and that no pair links.
	unseen []bool
	// prior is the probability that two unseen sessions are of one
	// wallet if their wallets have as many sessions as the linked ones
	// do, at the upper end of that number's interval (0 when the capture
	// tells nothing of it).
	prior float64
	// listed is that probability for a listed pair of two unseen
	// sessions when only the pairs that share a match are listed: the
	// unseen sessions' pairs of one wallet, prior of all their pairs,
	// counted among the listed ones alone (see listedShare).
	listed float64
}

// unseenDeviations is how many of its standard deviations the mean
// number of sessions of a session's wallet is taken above its estimate
// in unseenPrior: the upper end of its 95% interval.
const unseenDeviations = 1.96

// unseenPrior estimates from the capture how often two sessions whose
// own matches do not show a wallet, and that no pair links, are of one
// wallet, (E-1)/(U-1) (see the package documentation, "Linking
// sessions"): their counts cannot tell it, and the fitted prior, the
// share of one wallet among the pairs whose counts speak, says nothing of
// them. A session is unseen when chance alone gives at least its matches
// hiddenTail of the time.
func (lk *linker) unseenPrior(fit *linkFit) unseenPriors {
	n := len(lk.sessions)
	out := unseenPriors{unseen: make([]bool, n)}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	linked := make([]bool, n)
	for i := range lk.mix.pairs {
		ev := &lk.mix.pairs[i]
		if ev.shared == 0 || fit.est.posterior(ev)[sameWallet] < 0.5 {
			continue
		}
		linked[ev.x], linked[ev.y] = true, true
		parent[find(ev.x)] = find(ev.y)
	}
	sizes := map[int]float64{}
	var unseen float64
	for i := range lk.sessions {
		s := &lk.sessions[i]
		if s.unlinkable() {
			continue
		}
		if linked[i] {
			sizes[find(i)]++
			continue
		}
		if s.matched < 1 || poissonCDF(s.matched-1, s.chance) <= 1-hiddenTail {
			out.unseen[i] = true
			unseen++
		}
	}
	groups := make([]float64, 0, len(sizes))
	for _, c := range sizes {
		groups = append(groups, c)
	}
	out.prior = unseenShare(groups, unseen, unseenDeviations)
	var listed float64 // pairs of two unseen sessions among the listed
	for i := range lk.mix.pairs {
		if ev := &lk.mix.pairs[i]; out.unseen[ev.x] && out.unseen[ev.y] {
			listed++
		}
	}
	out.listed = listedShare(out.prior, unseen, listed)
	return out
}

// listedShare is the share of one wallet among listed of the pairs of
// unseen sessions if every pair of one wallet among them is listed, prior
// of all their pairs: prior·U(U-1)/2 over the listed, at most 1, and at
// least prior (all pairs listed, or none).
func listedShare(prior, unseen, listed float64) float64 {
	all := unseen * (unseen - 1) / 2
	if prior == 0 || listed <= 0 || listed >= all {
		return prior
	}
	return math.Min(prior*all/listed, 1)
}

// unseenShare is the probability that two of unseen sessions are of one
// wallet if they are the sessions of wallets of as many sessions as the
// groups: (E-1)/(U-1) for E = Σn²/Σn over the groups' sizes n and U
// unseen, at most 1; 0 without a group or for fewer than two sessions. E
// is taken z of its standard deviations above its estimate: a ratio of
// sums over k groups, its variance k/(k-1)·Σ(n²-E·n)²/(Σn)² (the delta
// method; none for a single group).
func unseenShare(groups []float64, unseen, z float64) float64 {
	var sum, squares float64
	for _, c := range groups {
		sum += c
		squares += c * c
	}
	if sum == 0 || unseen < 2 {
		return 0
	}
	e := squares / sum
	if k := float64(len(groups)); k > 1 {
		var dev float64
		for _, c := range groups {
			dev += (c*c - e*c) * (c*c - e*c)
		}
		e += z * math.Sqrt(k/(k-1)*dev) / sum
	}
	return math.Min((e-1)/(unseen-1), 1)
}

// reach is the upper end of a pair's interval raised to the prior of
// unseen sessions when either of its sessions is unseen and its
// probability lies below that prior; for a pair of two unseen sessions,
// to the larger of that prior and their listed pairs' share.
func (u *unseenPriors) reach(x, y int, p, hi float64) float64 {
	prior := u.prior
	if u.unseen[x] && u.unseen[y] {
		prior = math.Max(prior, u.listed)
	}
	if prior == 0 || !u.unseen[x] && !u.unseen[y] || p >= prior {
		return hi
	}
	return math.Max(hi, prior)
}
