package leak

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/btcsuite/btcd/txscript"
)

// ScriptType is the type of an output script as the attack sees it.
type ScriptType uint8

// The script types a profile tells apart.
const (
	TypeOther ScriptType = iota
	TypeP2PKH
	TypeP2SH
	TypeP2WPKH
	TypeP2WSH
	TypeP2TR
)

// TypeOf is the type of an output script.
func TypeOf(script []byte) ScriptType {
	switch txscript.GetScriptClass(script) {
	case txscript.PubKeyHashTy:
		return TypeP2PKH
	case txscript.ScriptHashTy:
		return TypeP2SH
	case txscript.WitnessV0PubKeyHashTy:
		return TypeP2WPKH
	case txscript.WitnessV0ScriptHashTy:
		return TypeP2WSH
	case txscript.WitnessV1TaprootTy:
		return TypeP2TR
	}
	return TypeOther
}

// MaxProfileClass is the largest class a profile names: a script of more
// appearances is of this class.
const MaxProfileClass = 8

// Profile is what the block-download attack sees of a matched script in
// the scanned range: its class k (appearances, 1..MaxProfileClass),
// whether an input spends it there, whether it rides in other matches'
// transactions, its type, and its era (the decile of the scanned range
// of its first appearance, 0..9). Covers are drawn to the wallet's
// profiles, so that an attacker conditioning on any of these sees the
// same mixture of wallet and covers.
type Profile struct {
	Class  int
	Spent  bool
	Riding bool
	Type   ScriptType
	Era    int
}

// ProfileOf is the profile of a script matched as m in a view that
// scanned first..last; spent says whether an input spends it there.
func ProfileOf(script []byte, m Match, spent bool, first, last int32) Profile {
	p := Profile{Class: int(min(m.Appearances, MaxProfileClass)), Spent: spent, Riding: m.CoLocated, Type: TypeOf(script)}
	if len(m.Heights) > 0 && last > first {
		p.Era = min(int(10*float64(m.Heights[0]-first)/float64(last-first+1)), 9)
	}
	return p
}

// Need is how many more covers of each profile keep the wallet's share of
// every class at most target in the view the profiles come from (the
// collusion, which sees most): for the W_k groups of the wallet of class
// k (one profile per group, its most appearing member's), the C_k covers
// already of that class and the chance groups chance[k] (the labelled
// null of the last scan; 0 when unknown, which over-provisions), class k
// needs C_k + need_k = max(0, ⌈W_k/t - W_k - chance[k]⌉) covers, so that
// W_k/(W_k + C_k + chance[k]) ≤ t. need_k is spread over the class's
// wallet profiles in proportion to them (largest remainders), so that the
// covers copy the wallet's mixture. A target outside (0, 1) needs none.
func Need(wallet, covers []Profile, chance map[int]float64, target float64) map[Profile]int {
	out := map[Profile]int{}
	if !(target > 0 && target < 1) {
		return out
	}
	byClass := map[int][]Profile{}
	for _, p := range wallet {
		byClass[p.Class] = append(byClass[p.Class], p)
	}
	have := map[int]int{}
	for _, p := range covers {
		have[p.Class]++
	}
	for _, k := range sortedKeys(byClass) {
		ps := byClass[k]
		w := float64(len(ps))
		// The small tolerance keeps W/t exact when it is whole (0.5 of 3
		// is 6, not 6.000000000000001).
		total := int(math.Max(0, math.Ceil(w/target-w-chance[k]-1e-9)))
		more := total - have[k]
		if more <= 0 {
			continue
		}
		count := map[Profile]int{}
		for _, p := range ps {
			count[p]++
		}
		spread(out, count, len(ps), more)
	}
	return out
}

// spread adds n to out over the keys of count in proportion to their
// counts (of total), by largest remainders, ties to the larger count,
// then to the profile first in order.
func spread(out, count map[Profile]int, total, n int) {
	type share struct {
		p    Profile
		c    int
		frac float64
	}
	var shares []share
	given := 0
	for p, c := range count {
		x := float64(n) * float64(c) / float64(total)
		if int(x) > 0 {
			out[p] += int(x)
			given += int(x)
		}
		shares = append(shares, share{p, c, x - math.Floor(x)})
	}
	slices.SortFunc(shares, func(a, b share) int {
		if d := cmp.Compare(b.frac, a.frac); d != 0 {
			return d
		}
		if d := cmp.Compare(b.c, a.c); d != 0 {
			return d
		}
		return compareProfiles(a.p, b.p)
	})
	for i := 0; given < n; i, given = i+1, given+1 {
		out[shares[i%len(shares)].p]++
	}
}

func compareProfiles(a, b Profile) int {
	return cmp.Or(cmp.Compare(a.Class, b.Class), cmp.Compare(boolInt(a.Spent), boolInt(b.Spent)),
		cmp.Compare(boolInt(a.Riding), boolInt(b.Riding)), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Era, b.Era))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Profiled is a candidate cover: a script and its profile.
type Profiled struct {
	Script  []byte
	Profile Profile
}

// Draw draws, for each profile of need, that many candidates of exactly
// that profile, uniformly with a generator seeded by seed (the same
// candidates and seed draw the same covers), each candidate at most once.
// missing counts, per profile, the covers no candidate could give.
func Draw(candidates []Profiled, need map[Profile]int, seed uint64) (drawn []Profiled, missing map[Profile]int) {
	missing = map[Profile]int{}
	byProfile := map[Profile][]Profiled{}
	for _, c := range candidates {
		if need[c.Profile] > 0 {
			byProfile[c.Profile] = append(byProfile[c.Profile], c)
		}
	}
	keys := make([]Profile, 0, len(need))
	for p := range need {
		keys = append(keys, p)
	}
	slices.SortFunc(keys, compareProfiles)
	rng := rand.New(rand.NewPCG(seed, 0x636f766572))
	for _, p := range keys {
		pool := byProfile[p]
		slices.SortFunc(pool, func(a, b Profiled) int { return slices.Compare(a.Script, b.Script) })
		n := need[p]
		for i := 0; i < n && i < len(pool); i++ {
			j := i + rng.IntN(len(pool)-i)
			pool[i], pool[j] = pool[j], pool[i]
			drawn = append(drawn, pool[i])
		}
		if n > len(pool) {
			missing[p] = n - len(pool)
		}
	}
	return drawn, missing
}
