package leak

import (
	"math"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// maxNullMatches bounds the matches of two or more appearances a shift of
// the null keeps to group, and apart from them those of one; beyond it
// they are counted only.
const maxNullMatches = 20_000

// Shifts of the null: by at least minShift scanned blocks (past a burst
// of the wallet's own blocks) and by steps of shiftStep, both ways. And
// the neighbours a fetched block's scripts of one appearance are set
// against: the nearest scanned blocks not fetched, up to neighbours on
// each side.
const (
	minShift   = 8
	shiftStep  = 4
	neighbours = 8
)

// shiftNull is what the fetched set matches when shifted along the
// scanned blocks: the null of the block-download attack (see the package
// documentation). A shift keeps the fetched blocks' spacing and the
// chain's own clustering (outputs spent in the next blocks, scripts paid
// in bursts) but not their alignment with the wallet's transactions, so
// what a shifted set matches is what chance gives a set of its shape.
// Shifts are short, a few dozen blocks either way, and reflected at the
// ends of the range, so that a shifted block is of the same era as the
// one it stands for (a chain's recent blocks hold more outputs not yet
// spent, seen once, than its older ones).
type shiftNull struct {
	rank    []int32  // per block of the index: its rank among the scanned ones, -1 if not scanned
	n       int      // scanned blocks
	fetched []uint64 // bit set over ranks
	shifts  []int
	// singles counts, per shift, the matches of one appearance; byK the
	// matches of each number of appearances; multi keeps those of two or
	// more, to be grouped.
	singles []float64
	byK     []map[uint64]float64
	// near lists, per fetched block (by its offset in the index), the
	// offsets of its neighbours; ones counts the candidates of one
	// appearance in each block of interest (fetched or a neighbour).
	near  map[int32][]int32
	ones  map[int32]float64
	multi [][]Match
	// kept counts, per shift, the matches of two or more appearances
	// kept in multi; oneTxs counts per shift and transaction (txKey) the
	// matches of one appearance, at most maxNullMatches transactions a
	// shift.
	kept   []int
	oneTxs []map[uint64]int
	over   bool // a shift matched more than maxNullMatches
	ranks  []int32
	// groups is, after finish, the mean number of groups per number of
	// appearances of their most appearing member, and groupVar its
	// variance over the shifts.
	groups, groupVar map[uint64]float64
	// self is, after finish, the mean number of groups per number of
	// appearances whose most appearing member the fetched set itself
	// matches (see selfCorrected).
	self map[uint64]float64
	// huge and hugeVar are the mean and variance of the groups of more
	// than hugeGroup members, all of two or more appearances (those of
	// one are counted only), whatever their number of appearances (each
	// in groups too).
	huge, hugeVar float64
}

// hugeGroup is the most members a group may have to be counted in the
// class of its most appearing member's appearances. A fetched set that
// holds most of the scanned blocks joins, through the scripts riding in
// each other's transactions, thousands of matches into one group, as
// each of its shifts does; which of its members appears most is itself
// chance, so such groups are counted also against the shifts' groups of
// that size whatever their appearances, and have the lower of the two
// probabilities. A wallet's payments chained through its payers' change
// form groups of tens of scripts.
const hugeGroup = 64

// newShiftNull sets up the null of the fetched set over the scanned set
// of nb blocks: shifts spread evenly over the scanned blocks, at most
// shifts of them (nil when there are none to make: negative shifts, a
// range of one block, nothing fetched or everything).
func newShiftNull(scanned, fetched []uint64, nb, shifts int) *shiftNull {
	z := &shiftNull{rank: make([]int32, nb)}
	for i := range nb {
		z.rank[i] = -1
		if bitGet(scanned, i) {
			z.rank[i] = int32(z.n)
			z.n++
		}
	}
	z.fetched = make([]uint64, (z.n+63)/64)
	f := 0
	for i := range nb {
		if z.rank[i] >= 0 && bitGet(fetched, i) {
			bitSet(z.fetched, int(z.rank[i]))
			f++
		}
	}
	if shifts <= 0 || z.n < 3 || f == 0 || f == z.n {
		return nil
	}
	half := (shifts + 1) / 2
	step, from := float64(shiftStep), float64(minShift)
	if reach := from + step*float64(half-1); reach > float64(z.n-1)/2 {
		// A short range: shifts spread over half of it.
		from = math.Max(1, float64(z.n-1)/2/float64(half))
		step = from
	}
	for i := range half {
		d := int(math.Round(from + step*float64(i)))
		for _, s := range []int{d, -d} {
			if d > 0 && d < z.n && !slices.Contains(z.shifts, s) && len(z.shifts) < shifts {
				z.shifts = append(z.shifts, s)
			}
		}
	}
	z.findNeighbours(nb)
	z.singles = make([]float64, len(z.shifts))
	z.byK = make([]map[uint64]float64, len(z.shifts))
	for i := range z.byK {
		z.byK[i] = map[uint64]float64{}
	}
	z.multi = make([][]Match, len(z.shifts))
	z.kept, z.oneTxs = make([]int, len(z.shifts)), make([]map[uint64]int, len(z.shifts))
	for i := range z.oneTxs {
		z.oneTxs[i] = map[uint64]int{}
	}
	return z
}

// findNeighbours lists, for every fetched block, the nearest scanned
// blocks not fetched, up to neighbours on each side.
func (z *shiftNull) findNeighbours(nb int) {
	offset := make([]int32, z.n) // rank -> offset
	for i := range nb {
		if q := z.rank[i]; q >= 0 {
			offset[q] = int32(i)
		}
	}
	z.near, z.ones = map[int32][]int32{}, map[int32]float64{}
	for q := range z.n {
		if !bitGet(z.fetched, q) {
			continue
		}
		var near []int32
		for _, step := range []int{-1, 1} {
			found := 0
			for p := q + step; p >= 0 && p < z.n && found < neighbours; p += step {
				if !bitGet(z.fetched, p) {
					near = append(near, offset[p])
					found++
				}
			}
		}
		z.near[offset[q]] = near
		z.ones[offset[q]] = 0
		for _, o := range near {
			z.ones[o] = 0
		}
	}
}

// test counts the entry, of k appearances in the scanned range, against
// every shift of the fetched set, and a candidate of one appearance in
// the blocks of interest.
func (z *shiftNull) test(r *Report, e *universe.IndexEntry, k uint64) {
	if z == nil {
		return
	}
	z.ranks = z.ranks[:0]
	for _, h := range e.Heights {
		if q := z.rank[h-r.first]; q >= 0 {
			z.ranks = append(z.ranks, q)
			if k == 1 {
				if _, ok := z.ones[h-r.first]; ok {
					z.ones[h-r.first]++
				}
			}
		}
	}
	for j, s := range z.shifts {
		all := true
		for _, q := range z.ranks {
			if !bitGet(z.fetched, mirror(int(q)+s, z.n)) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		z.byK[j][k]++
		switch {
		case k == 1:
			z.singles[j]++
			// Counted per transaction: a match of two or more
			// appearances rides in the report through the scripts seen
			// once beside it, as in the shifts.
			z.countSingleTxs(j, e, r.first)
		case z.kept[j] < maxNullMatches:
			z.kept[j]++
			z.multi[j] = append(z.multi[j], r.matchOf(e, k))
		default:
			z.over = true
		}
	}
}

// countSingleTxs counts the transactions, in the scanned range, of an
// entry of one appearance that shift j matches.
func (z *shiftNull) countSingleTxs(j int, e *universe.IndexEntry, first int32) {
	for i, h := range e.Heights {
		if i >= len(e.Txs) || z.rank[h-first] < 0 {
			continue
		}
		for _, tx := range e.Txs[i] {
			k := txKey(h, tx)
			if _, ok := z.oneTxs[j][k]; ok || len(z.oneTxs[j]) < maxNullMatches {
				z.oneTxs[j][k]++
			} else {
				z.over = true
			}
		}
	}
}

// finish groups each shift's matches as the report's are grouped and
// counts the groups by the appearances of their most appearing member,
// and apart those whose most appearing member the fetched set itself
// matches (matched: the report's matches of two or more appearances).
func (z *shiftNull) finish(transactions bool, matched map[string]bool) {
	if z == nil {
		return
	}
	z.groups, z.groupVar, z.self = map[uint64]float64{}, map[uint64]float64{}, map[uint64]float64{}
	per := make([]map[uint64]float64, len(z.shifts))
	huge := make([]float64, len(z.shifts))
	for j, ms := range z.multi {
		sortMatches(ms)
		g := groupMatchesWith(ms, transactions, z.oneTxs[j])
		z.oneTxs[j] = nil
		per[j] = map[uint64]float64{}
		size := map[int]int{}
		for i := range ms {
			size[g.find(i)]++
		}
		for i := range ms {
			if g.find(i) != i || ms[i].Appearances < 2 {
				continue
			}
			per[j][ms[i].Appearances]++
			if matched[ms[i].Candidate] {
				z.self[ms[i].Appearances] += 1 / float64(len(z.shifts))
			}
			if size[i] > hugeGroup {
				huge[j]++
			}
		}
		// Matches beyond those kept count as groups of their own.
		for k, c := range z.byK[j] {
			if k >= 2 {
				kept := 0.0
				for i := range ms {
					if ms[i].Appearances == k {
						kept++
					}
				}
				per[j][k] += c - kept
			}
		}
		z.multi[j] = nil
	}
	keys := map[uint64]bool{}
	for _, m := range per {
		for k := range m {
			keys[k] = true
		}
	}
	z.huge, z.hugeVar = moments(huge)
	for k := range keys {
		var s1, s2 float64
		for _, m := range per {
			s1 += m[k]
			s2 += m[k] * m[k]
		}
		n := float64(len(per))
		z.groups[k] = s1 / n
		z.groupVar[k] = math.Max(s2/n-(s1/n)*(s1/n), 0)
	}
}

// resolved is a class's chance count, of mean m and variance v over the
// shifts, no lower than the null can resolve: one group in all its
// shifts, 1/S of a group for S shifts, and of a variance no lower than
// that mean (see the package documentation, "Resolution").
func (z *shiftNull) resolved(m, v float64) (float64, float64) {
	floor := 1 / float64(len(z.shifts))
	if m >= floor {
		return m, v
	}
	return floor, math.Max(v, floor)
}

// moments are the mean and variance of xs.
func moments(xs []float64) (mean, variance float64) {
	var s1, s2 float64
	for _, x := range xs {
		s1 += x
		s2 += x * x
	}
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	return s1 / n, math.Max(s2/n-(s1/n)*(s1/n), 0)
}

// mirror maps a rank shifted past either end of 0..n-1 back inside, as
// in a mirror.
func mirror(q, n int) int {
	period := 2 * (n - 1)
	q %= period
	if q < 0 {
		q += period
	}
	if q >= n {
		q = period - q
	}
	return q
}

// matched is the mean number of matches of k appearances over the shifts.
func (z *shiftNull) matched(k uint64) float64 {
	var s float64
	for _, m := range z.byK {
		s += m[k]
	}
	return s / float64(len(z.byK))
}

// singleMoments are the mean and variance of the candidates of one
// appearance that the fetched blocks would carry were they not the
// wallet's: per fetched block, the mean and variance of what its
// neighbours carry, summed (a block's count is one draw from its
// neighbours' spread).
func (z *shiftNull) singleMoments() (mean, variance float64) {
	for _, o := range sortedKeys(z.near) {
		near := z.near[o]
		if len(near) == 0 {
			continue
		}
		var s1, s2 float64
		for _, o := range near {
			c := z.ones[o]
			s1 += c
			s2 += c * c
		}
		n := float64(len(near))
		m := s1 / n
		mean += m
		variance += math.Max(s2/n-m*m, m)
	}
	return mean, variance
}

// sortMatches orders matches from most appearances to fewest, then by
// candidate: the order grouping relies on.
func sortMatches(ms []Match) {
	slices.SortStableFunc(ms, func(a, b Match) int {
		if a.Appearances != b.Appearances {
			return int(int64(b.Appearances) - int64(a.Appearances))
		}
		return strings.Compare(a.Candidate, b.Candidate)
	})
}

// chanceRange is the central 95% range of a count of mean m and variance
// v (a negative binomial when v exceeds m, else Poisson): the chance
// matches a fetched set of the null's shape carries.
func chanceRange(m, v float64) (lo, hi float64) {
	if v <= m {
		return model.PoissonRange(m)
	}
	tail := (1 - model.Level) / 2
	var cdf float64
	lo = -1
	limit := m + 20*math.Sqrt(v) + 20
	for x := 0.0; x <= limit; x++ {
		cdf += math.Exp(model.LogNegBinomial(x, m, v))
		if lo < 0 && cdf > tail {
			lo = x
		}
		if cdf >= 1-tail {
			return math.Max(lo, 0), x
		}
	}
	return math.Max(lo, 0), limit
}

// chanceLevel is the probability that a chance count of mean m and
// variance v lies in chanceRange(m, v): the coverage of the intervals
// made from it, at least the package's level, more when the mean is small
// (no range of whole counts holds exactly 95%).
func chanceLevel(m, v float64) float64 {
	if v <= m {
		return model.PoissonRangeLevel(m)
	}
	lo, hi := chanceRange(m, v)
	var mass float64
	for x := lo; x <= hi; x++ {
		mass += math.Exp(model.LogNegBinomial(x, m, v))
	}
	return math.Min(mass, 1)
}

// Tails of the range a session's chance count is taken in
// (observedCount): of the 5% outside it, chanceAboveTail above it (the
// wallet's groups fewer than the interval says) and the rest below. The
// shifts' law is lighter above than the sessions' chance counts are, and
// heavier below (see the package documentation, "The session's count").
const (
	chanceAboveTail = 0.015
	chanceBelowTail = 1 - model.Level - chanceAboveTail
)

// observedCount is the number of observed groups that chance, a count of
// mean m and variance v (a negative binomial, or Poisson when v ≤ m),
// does not explain, its interval and the probability the interval holds
// the truth. The chance count is among the observed groups, so its law
// is taken given that it is no more than observed: the interval is
// observed less the 95% range of that law from its chanceBelowTail
// quantile to its 1-chanceAboveTail one, or, when the unconditioned
// law's range so taken reaches observed (chance may explain every
// group), observed less the range from that law's chanceBelowTail
// quantile to observed (see the package documentation, "The session's
// count").
func observedCount(observed, m, v float64) (n, lo, hi, level float64) {
	if observed <= 0 {
		return 0, 0, 0, 1
	}
	n = math.Max(observed-m, 0)
	if m <= 0 {
		return n, n, n, 1
	}
	ps := make([]float64, int(observed)+1)
	var total float64
	for x := range ps {
		ps[x] = math.Exp(model.LogNegBinomial(float64(x), m, v))
		total += ps[x]
	}
	if total <= 0 || math.IsNaN(total) {
		// Chance all but never gives so few: every observed group is
		// taken to be chance's.
		return n, 0, 0, 1
	}
	top := countQuantile(m, v, 1-chanceAboveTail)
	xlo, xhi := -1, len(ps)-1
	var cdf float64
	for x, p := range ps {
		cdf += p / total
		if xlo < 0 && cdf > chanceBelowTail {
			xlo = x
		}
		if top < observed && cdf >= 1-chanceAboveTail {
			xhi = x
			break
		}
	}
	xlo = max(xlo, 0)
	for x := xlo; x <= xhi; x++ {
		level += ps[x] / total
	}
	lo, hi = observed-float64(xhi), observed-float64(xlo)
	return n, math.Min(lo, n), math.Max(hi, n), math.Min(level, 1)
}

// countQuantile is the least whole x at which a count of mean m and
// variance v (a negative binomial, or Poisson when v ≤ m) has a
// cumulative probability of q or more.
func countQuantile(m, v, q float64) float64 {
	var cdf float64
	limit := m + 20*math.Sqrt(math.Max(v, m)) + 20
	for x := 0.0; x <= limit; x++ {
		cdf += math.Exp(model.LogNegBinomial(x, m, v))
		if cdf >= q {
			return x
		}
	}
	return limit
}
