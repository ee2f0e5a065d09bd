package attack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// captureSpec describes a labelled capture: wallets of a log-uniform
// number of used addresses, each connecting in 1 to MaxSessions sessions
// (a new tweak each time) with filters at a rate log-uniform between
// MinRate and MaxRate, some wallets paying others (the payer's filters
// then hold 1 to 3 of the payee's addresses), and noise sessions whose
// wallets have no address in the universe.
type captureSpec struct {
	Wallets            int
	MinAddrs, MaxAddrs int
	MaxSessions        int
	MinRate, MaxRate   float64
	Payments           int
	Noise              int
	Universe           int // random candidates besides the wallets' addresses
}

// issueSpec is the capture the issue describes.
var issueSpec = captureSpec{Wallets: 50, MinAddrs: 5, MaxAddrs: 500, MaxSessions: 4, MinRate: 1e-5, MaxRate: 1e-2,
	Payments: 8, Noise: 8, Universe: 1_000_000}

// labelledCapture is a generated capture and its truth.
type labelledCapture struct {
	groups   [][]*bip37.Filter
	wallet   []int          // per session, its wallet (noise sessions have one each)
	truth    []map[int]bool // per session, the universe lines its filters hold
	paid     map[[2]int]bool
	universe []byte
	size     int
}

// labelledWallet is a generated wallet: the hashes of its used addresses
// (in the universe) and its other elements (unused keys, never in the
// universe), each key a pubkey and its hash as bitcoinj inserts them.
type labelledWallet struct {
	used  [][]byte
	other [][]byte
	rate  float64
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

func randomElem(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	randomBytes(rng, b)
	return b
}

// newLabelledCapture generates the capture of spec from seed.
func newLabelledCapture(seed uint64, spec captureSpec) *labelledCapture {
	rng := rand.New(rand.NewPCG(seed, 0x1abe1))
	wallets := make([]labelledWallet, spec.Wallets)
	for i := range wallets {
		w := &wallets[i]
		n := int(math.Round(logUniform(rng, float64(spec.MinAddrs), float64(spec.MaxAddrs))))
		lookahead := 20 + n/4
		for range n {
			w.used = append(w.used, randomElem(rng, 20))
			w.other = append(w.other, randomElem(rng, 33)) // its pubkey
		}
		for range lookahead {
			w.other = append(w.other, randomElem(rng, 20), randomElem(rng, 33))
		}
		w.rate = logUniform(rng, spec.MinRate, spec.MaxRate)
	}
	lc := &labelledCapture{paid: map[[2]int]bool{}}
	// Payments: the payer's filters also hold some of the payee's
	// addresses.
	shared := make([][][]byte, len(wallets))
	for range spec.Payments {
		a, b := rng.IntN(len(wallets)), rng.IntN(len(wallets))
		if a == b || lc.paid[[2]int{min(a, b), max(a, b)}] {
			continue
		}
		lc.paid[[2]int{min(a, b), max(a, b)}] = true
		k := 1 + rng.IntN(3)
		for _, j := range rng.Perm(len(wallets[b].used))[:min(k, len(wallets[b].used))] {
			shared[a] = append(shared[a], wallets[b].used[j])
		}
	}
	// The universe: random hashes, the wallets' used addresses among them.
	lc.size = spec.Universe
	var used [][]byte
	for _, w := range wallets {
		used = append(used, w.used...)
	}
	lineOf := map[string]int{}
	total := spec.Universe + len(used)
	at := rng.Perm(total)
	slot := make([][]byte, total)
	for i, u := range used {
		slot[at[i]] = u
		lineOf[string(u)] = at[i] + 1
	}
	var b bytes.Buffer
	h := make([]byte, 20)
	for i := range total {
		if slot[i] == nil {
			randomBytes(rng, h)
			b.WriteString(hex.EncodeToString(h))
		} else {
			b.WriteString(hex.EncodeToString(slot[i]))
		}
		b.WriteByte('\n')
	}
	lc.universe = b.Bytes()
	lc.size = total
	for i, w := range wallets {
		elems := slices.Concat(w.used, shared[i], w.other)
		truth := map[int]bool{}
		for _, e := range slices.Concat(w.used, shared[i]) {
			truth[lineOf[string(e)]] = true
		}
		for range 1 + rng.IntN(spec.MaxSessions) {
			lc.add(i, elems, w.rate, rng, truth)
		}
	}
	for j := range spec.Noise {
		var elems [][]byte
		for range 20 + rng.IntN(200) {
			elems = append(elems, randomElem(rng, 20))
		}
		lc.add(len(wallets)+j, elems, logUniform(rng, spec.MinRate, spec.MaxRate), rng, map[int]bool{})
	}
	return lc
}

// add adds a session of wallet w: one filter of its elements at rate.
func (lc *labelledCapture) add(w int, elems [][]byte, rate float64, rng *rand.Rand, truth map[int]bool) {
	f := bip37.NewFilter(uint32(len(elems)), rate, rng.Uint32(), wire.BloomUpdateP2PubkeyOnly)
	for _, e := range elems {
		f.Add(e)
	}
	lc.groups = append(lc.groups, []*bip37.Filter{f})
	lc.wallet = append(lc.wallet, w)
	lc.truth = append(lc.truth, truth)
}

// sameWallet reports whether sessions a and b are one wallet's.
func (lc *labelledCapture) sameWallet(a, b int) bool { return lc.wallet[a] == lc.wallet[b] }

// linkScore scores a linkage against the truth.
type linkScore struct {
	truePairs, tp, fp    int
	confident, confWrong int // pairs of probability ≥ 0.95, and of them of different wallets
	wrongAbove95         int // linked pairs of different wallets at probability > 0.95
	priorCovered         bool
	sharedPairs          int // pairs of different wallets that share addresses
	sharedLinked         int // of them linked
	// The pairs' probability intervals against the probability at the
	// true prior (the one estimated input).
	intervals, covered int
}

func (lc *labelledCapture) scoreLinks(l *Linkage) linkScore {
	var sc linkScore
	n := len(lc.wallet)
	for a := range n {
		for b := a + 1; b < n; b++ {
			if lc.sameWallet(a, b) {
				sc.truePairs++
			}
		}
	}
	for _, p := range l.Pairs {
		same := lc.sameWallet(p.A, p.B)
		wa, wb := lc.wallet[p.A], lc.wallet[p.B]
		payment := lc.paid[[2]int{min(wa, wb), max(wa, wb)}]
		if payment {
			sc.sharedPairs++
		}
		if p.Linked {
			if same {
				sc.tp++
			} else {
				sc.fp++
				if p.Probability > 0.95 {
					sc.wrongAbove95++
				}
				if payment {
					sc.sharedLinked++
				}
			}
		}
		if p.Probability >= 0.95 {
			sc.confident++
			if !same {
				sc.confWrong++
			}
		}
	}
	truePrior := float64(sc.truePairs) / float64(n*(n-1)/2)
	sc.priorCovered = truePrior >= l.PriorLow && truePrior <= l.PriorHigh
	for _, p := range l.Pairs {
		sc.intervals++
		if at := atPrior(p, l, truePrior); at >= p.ProbabilityLow-1e-9 && at <= p.ProbabilityHigh+1e-9 {
			sc.covered++
		}
	}
	return sc
}

// atPrior is a link's probability at another prior of one wallet, the
// payment prior held: the posterior's odds against two wallets that share
// nothing scale with the priors' odds.
func atPrior(p SessionLink, l *Linkage, other float64) float64 {
	priors := func(same float64) linkParams {
		return linkParams{priors: [hypotheses]float64{sameWallet: same, otherWallets: 1 - same - l.PaymentPrior, sharedAddress: l.PaymentPrior}}
	}
	from, to := priors(l.Prior), priors(other)
	if p.Third >= 0 {
		from, to = trianglePrior(from), trianglePrior(to)
	}
	rest := 1 - p.Probability - p.ProbabilityShared
	if rest <= 0 {
		return p.Probability / (p.Probability + p.ProbabilityShared)
	}
	ks := (to.priors[sameWallet] / to.priors[otherWallets]) / (from.priors[sameWallet] / from.priors[otherWallets])
	kp := (to.priors[sharedAddress] / to.priors[otherWallets]) / (from.priors[sharedAddress] / from.priors[otherWallets])
	return ks * p.Probability / (ks*p.Probability + kp*p.ProbabilityShared + rest)
}

func (sc *linkScore) add(o linkScore) {
	sc.truePairs += o.truePairs
	sc.tp += o.tp
	sc.fp += o.fp
	sc.confident += o.confident
	sc.confWrong += o.confWrong
	sc.wrongAbove95 += o.wrongAbove95
	sc.sharedPairs += o.sharedPairs
	sc.sharedLinked += o.sharedLinked
	sc.intervals += o.intervals
	sc.covered += o.covered
}

func (sc linkScore) precision() float64 {
	if sc.tp+sc.fp == 0 {
		return 1
	}
	return float64(sc.tp) / float64(sc.tp+sc.fp)
}

func (sc linkScore) recall() float64 {
	if sc.truePairs == 0 {
		return 1
	}
	return float64(sc.tp) / float64(sc.truePairs)
}

func (sc linkScore) String() string {
	return fmt.Sprintf("%d true pairs, %d linked right, %d wrong (%d of them above 0.95; %d of %d pairs of wallets sharing addresses): precision %.4f, recall %.4f; %d pairs at P ≥ 0.95, %d of them wrong; probability intervals cover the probability at the true prior for %d of %d pairs (%.4f)",
		sc.truePairs, sc.tp, sc.fp, sc.wrongAbove95, sc.sharedLinked, sc.sharedPairs, sc.precision(), sc.recall(), sc.confident, sc.confWrong,
		sc.covered, sc.intervals, ratio(sc.covered, sc.intervals))
}

// analyzeScore scores reports against their truth: of the matches given
// probability ≥ 0.95, how many are right, and how often the wallet-size
// interval covers the truth.
type analyzeScore struct {
	confident, confRight int
	intervals, covered   int
	// The same for reports of at least 10 chance matches, where whole
	// counts allow an interval of 95% (with fewer, any interval that holds
	// the likeliest count of chance matches covers more).
	wide, wideCovered int
}

// score adds a report whose truth is the set of lines its filters hold.
func (sc *analyzeScore) score(r *Report, truth map[int]bool, size uint64) {
	n := float64(len(truth))
	in := n >= r.EstimatedWalletLow && n <= r.EstimatedWalletHigh
	sc.intervals++
	if in {
		sc.covered++
	}
	if r.ExpectedFalsePositives >= 10 {
		sc.wide++
		if in {
			sc.wideCovered++
		}
	}
	for _, m := range r.Matched {
		if m.Probability >= 0.95 {
			sc.confident++
			if truth[m.Line] {
				sc.confRight++
			}
		}
	}
}

func (sc *analyzeScore) add(o analyzeScore) {
	sc.confident += o.confident
	sc.confRight += o.confRight
	sc.intervals += o.intervals
	sc.covered += o.covered
	sc.wide += o.wide
	sc.wideCovered += o.wideCovered
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (sc analyzeScore) String() string {
	return fmt.Sprintf("%d matches at P ≥ 0.95, %.4f right; wallet-size intervals cover the truth in %d of %d (%.4f), in %d of the %d of 10 or more chance matches (%.4f)",
		sc.confident, ratio(sc.confRight, sc.confident), sc.covered, sc.intervals, ratio(sc.covered, sc.intervals),
		sc.wideCovered, sc.wide, ratio(sc.wideCovered, sc.wide))
}

// intersectTruth is the lines every session of a group holds.
func (lc *labelledCapture) intersectTruth(group []int) map[int]bool {
	out := map[int]bool{}
	for l := range lc.truth[group[0]] {
		all := true
		for _, s := range group[1:] {
			all = all && lc.truth[s][l]
		}
		if all {
			out[l] = true
		}
	}
	return out
}
