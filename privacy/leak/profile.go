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

// MaxProfileChain is the longest chain a profile names: a chain of more
// scripts is of this length.
const MaxProfileChain = 32

// Profile is what the block-download attack sees of a matched script in
// the scanned range: its class k (appearances, 1..MaxProfileClass),
// whether an input spends it there, whether it rides in other matches'
// transactions, its type, its era (the decile of the scanned range of
// its first appearance, 0..9), and the chain it belongs to.
//
// A wallet's scripts come in chains: a payment to it is made beside the
// payer's change, which the next payment spends; its own spend pays its
// change beside the payee. The attack ties such scripts into one group
// (package doc, Groups), so a cover drawn alone, however like a wallet's
// script, sits in a group of its own and the size of its group tells it
// apart. Group names the chain of a script within one list of profiles
// (the scripts sharing transactions, directly or through outputs that
// are neither's, such as a payer's change); 0 is a script alone. Chain
// is the chain's length, the number of scripts of the list with its
// Group (1 alone, at most MaxProfileChain): Shapes sets it. Covers are
// drawn as whole chains of the wallet's chains' shapes, so that an
// attacker conditioning on any of these, group size included, sees the
// same mixture of wallet and covers.
type Profile struct {
	Class  int
	Spent  bool
	Riding bool
	Type   ScriptType
	Era    int
	Chain  int
	Group  int
	// ChainSpent is, in a shape (Shape), how many of the chain's
	// scripts are spent in the range; 0 in a script's own profile.
	ChainSpent int
}

// ProfileOf is the profile of a script matched as m in a view that
// scanned first..last; spent says whether an input spends it there. It
// is a script alone (Group 0, Chain 1) until its caller names its chain.
func ProfileOf(script []byte, m Match, spent bool, first, last int32) Profile {
	p := Profile{Class: int(min(m.Appearances, MaxProfileClass)), Spent: spent, Riding: m.CoLocated, Type: TypeOf(script), Chain: 1}
	if len(m.Heights) > 0 && last > first {
		p.Era = min(int(10*float64(m.Heights[0]-first)/float64(last-first+1)), 9)
	}
	return p
}

// Shape is the shape of a chain: the profile of its head (its member of
// most appearances; of those, the first by profile order, so that a
// chain's shape does not depend on its order), with Era the chain's
// mean era (its members' eras averaged, rounded half up), Chain its
// length (capped at MaxProfileChain), ChainSpent how many of its members
// are spent (what sets their appearances: a script paid and spent
// appears twice, one only paid once), and Group 0.
//
// The mean era places a chain as the attack counts its scripts, one
// era each. The head's era alone let covers start later than the
// wallet's chains, and the chain's first era did not place them either:
// a wallet's chain starts soon after its birth and its payments spread
// from there to the tip, while a cover chain, found by following the
// block chain's transactions from the same era, runs its course within
// a few eras (on seed 4101 of
// the covered simulation, an AUC of 0.444 [0.393, 0.494] for the era of
// wallet against covers).
func Shape(chain []Profile) Profile {
	head, spent, eras := chain[0], 0, 0
	for _, p := range chain {
		if p.Class > head.Class || p.Class == head.Class && compareProfiles(p, head) < 0 {
			head = p
		}
		if p.Spent {
			spent++
		}
		eras += p.Era
	}
	n := len(chain)
	head.Chain, head.Group, head.ChainSpent = min(n, MaxProfileChain), 0, min(spent, MaxProfileChain)
	head.Era = (2*eras + n) / (2 * n)
	return head
}

// Chains splits ps into chains: the profiles of one nonzero Group
// together, in order of their first member, and each of Group 0 alone.
func Chains(ps []Profile) [][]Profile {
	return chainsBy(ps, func(p Profile) int { return p.Group })
}

// chainsBy splits xs into chains as Chains does, reading each one's
// Group with group.
func chainsBy[T any](xs []T, group func(T) int) [][]T {
	var out [][]T
	at := map[int]int{} // a group's chain, by its index in out
	for _, x := range xs {
		g := group(x)
		if g == 0 {
			out = append(out, []T{x})
			continue
		}
		i, ok := at[g]
		if !ok {
			i = len(out)
			at[g] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], x)
	}
	return out
}

// Shapes is the shape of each chain of ps (Chains), and ps with each
// profile's Chain set to its chain's length.
func Shapes(ps []Profile) (shapes, set []Profile) {
	size := map[int]int{}
	for _, p := range ps {
		size[p.Group]++
	}
	set = make([]Profile, len(ps))
	for i, p := range ps {
		p.Chain = 1
		if p.Group != 0 {
			p.Chain = min(size[p.Group], MaxProfileChain)
		}
		set[i] = p
	}
	for _, c := range Chains(ps) {
		shapes = append(shapes, Shape(c))
	}
	return shapes, set
}

// Need is how many more cover chains of each shape keep the wallet's
// share of every class's groups at most target in the view the profiles
// come from (the collusion, which sees most). The attack's unit is the
// group, so Need counts chains, not scripts: for the W_k chains of the
// wallet whose head is of class k (Chains and Shape of wallet), the C_k
// cover chains already of that class (of covers) and the chance groups
// chance[k] (the labelled null of the last scan; 0 when unknown, which
// over-provisions), class k needs C_k + need_k = max(0, ⌈W_k/t - W_k -
// chance[k]⌉) chains, so that W_k/(W_k + C_k + chance[k]) ≤ t. need_k is
// spread over the class's wallet shapes in proportion to them (largest
// remainders), so that the covers copy the wallet's mixture of shapes,
// chain length included. The keys are shapes (Shape). A target outside
// (0, 1) needs none.
func Need(wallet, covers []Profile, chance map[int]float64, target float64) map[Profile]int {
	out := map[Profile]int{}
	if !(target > 0 && target < 1) {
		return out
	}
	byClass := map[int][]Profile{}
	walletShapes, _ := Shapes(wallet)
	for _, p := range walletShapes {
		byClass[p.Class] = append(byClass[p.Class], p)
	}
	have := map[int]int{}
	coverShapes, _ := Shapes(covers)
	for _, p := range coverShapes {
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
		cmp.Compare(boolInt(a.Riding), boolInt(b.Riding)), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Era, b.Era),
		cmp.Compare(a.Chain, b.Chain), cmp.Compare(a.ChainSpent, b.ChainSpent), cmp.Compare(a.Group, b.Group))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Profiled is a candidate cover: a script and its profile, whose Group
// names the candidate chain it belongs to (0: a candidate alone).
type Profiled struct {
	Script  []byte
	Profile Profile
}

// Draw draws, for each shape of need (Need's keys), that many candidate
// chains of exactly that shape (Chains and Shape of their members'
// profiles), uniformly with a generator seeded by seed (the same
// candidates and seed draw the same covers), and returns every member
// of each chain drawn, chain after chain. Where too few chains have a
// shape, the rest are chains of that shape but for its era, the nearest
// era first (of one distance, uniformly), drawn once every shape has
// had the chains of its own era, so that a wallet's early chains get
// covers of their own era before any shape borrows them. A script is
// drawn at most once: a chain sharing a script with one drawn before is
// passed over. missing counts, per shape, the chains no candidate of
// any era could give.
func Draw(candidates []Profiled, need map[Profile]int, seed uint64) (drawn []Profiled, missing map[Profile]int) {
	byForm := chainsByForm(candidates, need)
	keys := make([]Profile, 0, len(need))
	for p := range need {
		keys = append(keys, p)
	}
	slices.SortFunc(keys, compareProfiles)
	d := &chainDrawer{rng: rand.New(rand.NewPCG(seed, 0x636f766572)), used: map[string]bool{}}
	short := map[Profile]int{}
	for _, p := range keys {
		if n := need[p] - d.take(exactEra(byForm[eraless(p)], p), need[p]); n > 0 {
			short[p] = n
		}
	}
	missing = map[Profile]int{}
	for _, p := range keys {
		if short[p] == 0 {
			continue
		}
		n := short[p]
		for _, pool := range byEraDistance(byForm[eraless(p)], p) {
			if n == 0 {
				break
			}
			n -= d.take(pool, n)
		}
		if n > 0 {
			missing[p] = n
		}
	}
	return d.drawn, missing
}

// chainsByForm returns the chains of candidates whose shape, its era set
// aside, is one need asks for (with a count above zero), by that form,
// each form's chains in the order of their first member's script.
func chainsByForm(candidates []Profiled, need map[Profile]int) map[Profile][]drawChain {
	forms := map[Profile]bool{}
	for p, n := range need {
		forms[eraless(p)] = forms[eraless(p)] || n > 0
	}
	byForm := map[Profile][]drawChain{}
	for _, ms := range candidateChains(candidates) {
		ps := make([]Profile, len(ms))
		for i, m := range ms {
			ps[i] = m.Profile
		}
		sh := Shape(ps)
		if form := eraless(sh); forms[form] {
			byForm[form] = append(byForm[form], drawChain{ms, sh})
		}
	}
	for _, pool := range byForm {
		slices.SortFunc(pool, func(a, b drawChain) int { return slices.Compare(a.members[0].Script, b.members[0].Script) })
	}
	return byForm
}

// exactEra returns the chains of pool whose shape is p, era included.
func exactEra(pool []drawChain, p Profile) []drawChain {
	var exact []drawChain
	for _, c := range pool {
		if c.shape == p {
			exact = append(exact, c)
		}
	}
	return exact
}

// byEraDistance returns the chains of pool of another era than p's,
// indexed by the distance of their era from p's (index 0 empty).
func byEraDistance(pool []drawChain, p Profile) [][]drawChain {
	var near [][]drawChain
	for _, c := range pool {
		if dist := abs(c.shape.Era - p.Era); dist > 0 {
			for len(near) <= dist {
				near = append(near, nil)
			}
			near[dist] = append(near[dist], c)
		}
	}
	return near
}

// drawChain is a candidate chain and its shape.
type drawChain struct {
	members []Profiled
	shape   Profile
}

// chainDrawer draws candidate chains, each script at most once.
type chainDrawer struct {
	rng   *rand.Rand
	used  map[string]bool
	drawn []Profiled
}

// take draws up to n chains of pool uniformly, passing over those
// sharing a script with a chain drawn before, and returns how many it
// drew. It reorders pool.
func (d *chainDrawer) take(pool []drawChain, n int) int {
	got := 0
	for i := 0; got < n && i < len(pool); i++ {
		j := i + d.rng.IntN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
		if slices.ContainsFunc(pool[i].members, func(m Profiled) bool { return d.used[string(m.Script)] }) {
			continue
		}
		for _, m := range pool[i].members {
			d.used[string(m.Script)] = true
		}
		d.drawn = append(d.drawn, pool[i].members...)
		got++
	}
	return got
}

// candidateChains splits candidates into their chains as Chains does.
func candidateChains(candidates []Profiled) [][]Profiled {
	return chainsBy(candidates, func(c Profiled) int { return c.Profile.Group })
}

// eraless is shape p with its era set aside.
func eraless(p Profile) Profile {
	p.Era = 0
	return p
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
