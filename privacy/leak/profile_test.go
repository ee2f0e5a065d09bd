package leak_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestNeedDrawProfiles: the covers Need asks for keep the wallet's share
// of each class at most the target (table cases and random wallets), in
// the wallet's mixture of profiles; Draw gives exactly those profiles,
// each candidate once, the same for the same seed, and counts what no
// candidate could give.
func TestNeedDrawProfiles(t *testing.T) {
	a := leak.Profile{Class: 2, Type: leak.TypeP2WPKH, Era: 1, Chain: 1}
	b := leak.Profile{Class: 2, Type: leak.TypeP2PKH, Era: 5, Spent: true, Chain: 1}
	one := leak.Profile{Class: 1, Type: leak.TypeP2WPKH, Era: 9, Chain: 1}
	// A script alone is a chain of one: b's shape counts it spent.
	bs := leak.Shape([]leak.Profile{b})
	for _, c := range []struct {
		name   string
		wallet []leak.Profile
		covers []leak.Profile
		chance map[int]float64
		target float64
		want   map[leak.Profile]int
	}{
		{"half", []leak.Profile{a, a, b, one}, nil, nil, 0.5, map[leak.Profile]int{a: 2, bs: 1, one: 1}},
		{"covers held", []leak.Profile{a, a, b, one}, []leak.Profile{a, b}, nil, 0.5, map[leak.Profile]int{a: 1, one: 1}},
		{"chance dilutes", []leak.Profile{a, a, b}, nil, map[int]float64{2: 2.5}, 0.5, map[leak.Profile]int{a: 1}},
		{"a lax target", []leak.Profile{a, a, b}, nil, nil, 0.9, map[leak.Profile]int{a: 1}},
		{"a strict target", []leak.Profile{a, b}, nil, nil, 0.2, map[leak.Profile]int{a: 4, bs: 4}},
		{"no target", []leak.Profile{a}, nil, nil, 0, map[leak.Profile]int{}},
	} {
		if got := leak.Need(c.wallet, c.covers, c.chance, c.target); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: need %v, want %v", c.name, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		var wallet, covers []leak.Profile
		for range 1 + rng.IntN(40) {
			wallet = append(wallet, leak.Profile{Class: 1 + rng.IntN(leak.MaxProfileClass), Type: leak.ScriptType(rng.IntN(6)), Era: rng.IntN(10), Spent: rng.IntN(2) == 0, Chain: 1})
		}
		for range rng.IntN(10) {
			covers = append(covers, wallet[rng.IntN(len(wallet))])
		}
		chance := map[int]float64{1 + rng.IntN(8): 3 * rng.Float64()}
		target := 0.05 + 0.9*rng.Float64()
		need := leak.Need(wallet, covers, chance, target)
		w, have := map[int]float64{}, map[int]float64{}
		inWallet := map[leak.Profile]bool{}
		for _, p := range wallet {
			w[p.Class]++
			inWallet[leak.Shape([]leak.Profile{p})] = true
		}
		for _, p := range covers {
			have[p.Class]++
		}
		for p, n := range need {
			have[p.Class] += float64(n)
			if !inWallet[p] || n <= 0 {
				t.Fatalf("trial %d: need %d of %+v, not a wallet profile", trial, n, p)
			}
		}
		for k, wk := range w {
			if share := wk / (wk + have[k] + chance[k]); share > target+1e-9 {
				t.Fatalf("trial %d: class %d share %.4f above target %.4f (W %g, covers %g, chance %g)", trial, k, share, target, wk, have[k], chance[k])
			}
		}
	}

	// Draw.
	var pool []leak.Profiled
	for i := range 30 {
		p := a
		if i%3 == 0 {
			p = b
		}
		pool = append(pool, leak.Profiled{Script: []byte(fmt.Sprintf("script-%02d", i)), Profile: p})
	}
	need := map[leak.Profile]int{a: 5, bs: 12, one: 2}
	drawn, missing := leak.Draw(pool, need, 7)
	again, _ := leak.Draw(pool, need, 7)
	other, _ := leak.Draw(pool, need, 8)
	got := map[leak.Profile]int{}
	seen := map[string]bool{}
	for _, d := range drawn {
		got[d.Profile]++
		if seen[string(d.Script)] {
			t.Errorf("%s drawn twice", d.Script)
		}
		seen[string(d.Script)] = true
	}
	if !maps.Equal(got, map[leak.Profile]int{a: 5, b: 10}) || !maps.Equal(missing, map[leak.Profile]int{bs: 2, one: 2}) {
		t.Errorf("drawn %v, missing %v", got, missing)
	}
	if !reflect.DeepEqual(drawn, again) || reflect.DeepEqual(drawn, other) {
		t.Errorf("the same seed drew differently, or another seed the same")
	}
	m := leak.Match{Appearances: 12, Heights: []int32{150}, CoLocated: true}
	if p := leak.ProfileOf([]byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, m, true, 100, 199); p != (leak.Profile{Class: 8, Spent: true, Riding: true, Type: leak.TypeP2WPKH, Era: 5, Chain: 1}) {
		t.Errorf("profile %+v", p)
	}
}

// TestNeedDrawChains: a chain's shape is its head's profile at the
// chain's mean era, with its length and spent members; Need counts the
// wallet's chains, not its scripts
// (a chain of five scripts is one group to the attack), keyed by each
// chain's shape (its head's profile and its length); Draw gives whole
// chains of exactly those shapes, never a chain sharing a script with
// one drawn, and counts the chains it could not give. The control: the
// same scripts as singles need five times the covers.
func TestNeedDrawChains(t *testing.T) {
	head := leak.Profile{Class: 3, Type: leak.TypeP2WPKH, Era: 2}
	tail := leak.Profile{Class: 2, Type: leak.TypeP2WPKH, Era: 2}
	chainOf := func(group, n int) []leak.Profile {
		out := []leak.Profile{}
		for i := range n {
			p := tail
			if i == 2 {
				p = head
			}
			p.Group = group
			out = append(out, p)
		}
		return out
	}
	wallet := slices.Concat(chainOf(7, 5), chainOf(9, 3), []leak.Profile{tail})
	shape5, shape3 := head, head
	shape5.Chain, shape3.Chain = 5, 3
	single := tail
	single.Chain = 1
	need := leak.Need(wallet, nil, nil, 0.5)
	if want := map[leak.Profile]int{shape5: 1, shape3: 1, single: 1}; !maps.Equal(need, want) {
		t.Fatalf("need %v, want %v", need, want)
	}
	// A shape is its head's profile (most appearances) at the chain's
	// mean era (not the head's 7, nor the first 2), rounded half up, with
	// the chain's length and spent members.
	for _, c := range []struct {
		chain []leak.Profile
		want  leak.Profile
	}{
		{[]leak.Profile{{Class: 2, Era: 5, Spent: true}, {Class: 3, Era: 7, Type: leak.TypeP2TR}, {Class: 1, Era: 2}},
			leak.Profile{Class: 3, Era: 5, Type: leak.TypeP2TR, Chain: 3, ChainSpent: 1}},
		{[]leak.Profile{{Class: 1, Era: 1}, {Class: 2, Era: 2, Spent: true}},
			leak.Profile{Class: 2, Era: 2, Spent: true, Chain: 2, ChainSpent: 1}},
		{[]leak.Profile{{Class: 1, Era: 0}, {Class: 1, Era: 0}, {Class: 1, Era: 1}},
			leak.Profile{Class: 1, Era: 0, Chain: 3}},
	} {
		if sh := leak.Shape(c.chain); sh != c.want {
			t.Errorf("shape of %+v: %+v, want %+v", c.chain, sh, c.want)
		}
	}
	shapes, set := leak.Shapes(wallet)
	if len(shapes) != 3 || set[0].Chain != 5 || set[5].Chain != 3 || set[8].Chain != 1 {
		t.Errorf("shapes %v, chains %v", shapes, set)
	}
	// The control: the same scripts, each alone, need a cover each.
	var alone []leak.Profile
	for _, p := range wallet {
		p.Group = 0
		alone = append(alone, p)
	}
	n := 0
	for _, k := range leak.Need(alone, nil, nil, 0.5) {
		n += k
	}
	if n != len(wallet) {
		t.Errorf("singles: %d covers, want %d", n, len(wallet))
	}
	// Candidates: chains of 5 and 3 in the shapes, one of 5 sharing a
	// script with another, a chain of 4 (no shape asked).
	var cands []leak.Profiled
	add := func(group int, ps []leak.Profile, names ...string) {
		for i, p := range ps {
			p.Group = group
			cands = append(cands, leak.Profiled{Script: []byte(names[i]), Profile: p})
		}
	}
	add(1, chainOf(0, 5), "a1", "a2", "a3", "a4", "a5")
	add(2, chainOf(0, 5), "a1", "b2", "b3", "b4", "b5")
	add(3, chainOf(0, 3), "c1", "c2", "c3")
	add(4, chainOf(0, 4), "d1", "d2", "d3", "d4")
	drawn, missing := leak.Draw(cands, map[leak.Profile]int{shape5: 2, shape3: 1, single: 1}, 1)
	groups := map[int]int{}
	seen := map[string]bool{}
	for _, d := range drawn {
		groups[d.Profile.Group]++
		if seen[string(d.Script)] {
			t.Errorf("%s drawn twice", d.Script)
		}
		seen[string(d.Script)] = true
	}
	if len(groups) != 2 || groups[3] != 3 || groups[1]+groups[2] != 5 || groups[4] != 0 {
		t.Errorf("drawn chains %v", groups)
	}
	if want := map[leak.Profile]int{shape5: 1, single: 1}; !maps.Equal(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
}

// TestDrawNearestEra: where too few chains have a shape, Draw takes
// chains of the shape but for its era, the nearest era first, and only
// once every shape has had the chains of its own era (a shape's exact
// chains are not spent on another's shortfall); what no era gives is
// missing. The control: a chain of another form at the asked era is
// never taken.
func TestDrawNearestEra(t *testing.T) {
	at := func(era int) leak.Profile {
		return leak.Profile{Class: 2, Spent: true, Type: leak.TypeP2WPKH, Era: era, Chain: 1, ChainSpent: 1}
	}
	other := at(3)
	other.Type = leak.TypeP2PKH
	var cands []leak.Profiled
	for i, p := range []leak.Profile{at(3), at(4), at(8), at(1), at(9), other} {
		cands = append(cands, leak.Profiled{Script: []byte{byte(i)}, Profile: p})
	}
	eraOf := map[string]int{}
	for _, c := range cands {
		eraOf[string(c.Script)] = c.Profile.Era
	}
	for _, c := range []struct {
		name    string
		need    map[leak.Profile]int
		want    []int // eras drawn, sorted
		missing map[leak.Profile]int
	}{
		{"exact", map[leak.Profile]int{at(4): 1}, []int{4}, map[leak.Profile]int{}},
		{"nearest", map[leak.Profile]int{at(6): 2}, []int{4, 8}, map[leak.Profile]int{}},
		{"exact before another's shortfall", map[leak.Profile]int{at(3): 2, at(4): 1}, []int{1, 3, 4}, map[leak.Profile]int{}},
		{"ties both sides", map[leak.Profile]int{at(2): 3}, []int{1, 3, 4}, map[leak.Profile]int{}},
		{"more than any era holds", map[leak.Profile]int{at(0): 7}, []int{1, 3, 4, 8, 9}, map[leak.Profile]int{at(0): 2}},
		{"no chain of the form", map[leak.Profile]int{{Class: 5, Era: 3, Chain: 1}: 1}, nil, map[leak.Profile]int{{Class: 5, Era: 3, Chain: 1}: 1}},
	} {
		for seed := range uint64(8) {
			drawn, missing := leak.Draw(slices.Clone(cands), c.need, seed)
			var eras []int
			for _, d := range drawn {
				if d.Profile.Type != leak.TypeP2WPKH {
					t.Fatalf("%s: drew %+v, of another form", c.name, d.Profile)
				}
				eras = append(eras, eraOf[string(d.Script)])
			}
			slices.Sort(eras)
			if !slices.Equal(eras, c.want) || !maps.Equal(missing, c.missing) {
				t.Errorf("%s, seed %d: drew eras %v, missing %v; want %v, missing %v", c.name, seed, eras, missing, c.want, c.missing)
			}
		}
	}
}
