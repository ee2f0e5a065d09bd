package client

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// drawRound samples the reserve (the chains of the classes short
// first), profiles the sample on the held filters and draws the cover
// chains of short from it, adding them to the pending chains; it
// returns them. The candidates not drawn are kept in spare, their
// owners' other blocks in near.
func (cs *coverScan) drawRound(short map[leak.Profile]int) []member {
	d := &roundDraw{cs: cs, short: short, wantFirst: wantedClasses(short)}
	d.sampleReserve()
	d.profileSample()
	d.pick()
	d.keepSpare()
	added := d.addPending()
	if len(d.loneDrawn) > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("%d covers drawn alone: no candidate chain had the length of the wallet's chain they stand for, so the size of their groups can tell them from the wallet's (the reserve grows from the blocks each scan fetches)", len(d.loneDrawn)))
	}
	return added
}

// roundDraw is one round's draw of cover chains (drawRound): the
// sample of the reserve, its candidates profiled on the held filters,
// and the chains drawn of them.
type roundDraw struct {
	cs    *coverScan
	short map[leak.Profile]int
	// wantFirst are the classes sampled first (wantedClasses).
	wantFirst map[uint8]bool
	// sample is the reserve's sample, probeAt the heights of each of
	// its scripts on the held filters.
	sample  []cover.Cover
	probeAt [][]int32
	// cands are the candidates the draw may take, profiled; byScript
	// and heights give each one's cover and heights by its script.
	cands   []leak.Profiled
	coverBy map[string]cover.Cover
	heights map[string][]int32
	// drawn are the candidates drawn, alone those drawn alone (see
	// coverScan.draw), isDrawn the scripts of drawn.
	drawn     []leak.Profiled
	loneDrawn map[string]bool
	isDrawn   map[string]bool
}

// sampleReserve samples the reserve again, the chains of the classes
// short first (a reserve of many rare chains of other classes would
// leave them out as often as not), and reads the sample's heights on
// the held filters.
func (d *roundDraw) sampleReserve() {
	d.sample = sampleChains(d.cs.set.Reserve(), maxProbes, d.wantFirst)
	scripts := make([][]byte, len(d.sample))
	for i, c := range d.sample {
		scripts[i] = c.Script
	}
	d.probeAt = d.cs.profileCandidates(scripts)
}

// skippedGroups are the chains of the sample left out whole: those
// with a script drawn and pending, or turned down by settle, and those
// with a script found early (exploredEarly).
func (d *roundDraw) skippedGroups() map[uint64]bool {
	skip := map[uint64]bool{}
	for i, c := range d.sample {
		if d.cs.skip[string(c.Script)] || d.cs.exploredEarly(c, d.probeAt[i]) {
			skip[c.Profile.Group] = true
		}
	}
	return skip
}

// exploredEarly reports whether candidate c, at heights hs, was found
// in a block the scan explored or has a block among those explored
// (the near ones, fetched for being a candidate's): its block fetched
// before the wallet's would tell it from the wallet's chains, which
// have one among the blocks explored only where the sweep happened on
// it.
func (cs *coverScan) exploredEarly(c cover.Cover, hs []int32) bool {
	_, found := cs.foundNow[string(c.Script)]
	return found || slices.ContainsFunc(hs, func(h int32) bool { return cs.exploredAt[h] })
}

// profileSample profiles the scripts of the sample the draw may take:
// those matched in the range, not hot, not skipped and not of a chain
// skipped (skippedGroups).
func (d *roundDraw) profileSample() {
	skipGroup := d.skippedGroups()
	var probes []member
	d.heights = map[string][]int32{}
	d.coverBy = map[string]cover.Cover{}
	for i, c := range d.sample {
		hs := d.probeAt[i]
		if len(hs) == 0 || len(hs) > d.cs.hot {
			continue // a hot script's blocks would cost more than it hides
		}
		if d.cs.skip[string(c.Script)] || d.cs.exploredEarly(c, hs) || c.Profile.Group != 0 && skipGroup[c.Profile.Group] {
			continue
		}
		d.heights[string(c.Script)] = hs
		d.coverBy[string(c.Script)] = c
		probes = append(probes, member{script: c.Script, heights: hs, group: c.Profile.Group})
	}
	for i, p := range d.cs.profiles(probes) {
		d.cands = append(d.cands, leak.Profiled{Script: probes[i].script, Profile: p})
	}
}

// pick draws the chains short from the candidates, then a margin of
// chains of the shapes short, none drawn alone, each taking first the
// chains found by the scan that asked for the wallet's blocks once or
// before it (onceTier), those of few riders among them first
// (fewRiders), then those of few riders: a chain's group is
// read on its own blocks only once they are fetched with the wallet's,
// and those the plan's other blocks grow are then left out
// (settleFetched).
func (d *roundDraw) pick() {
	few, once := d.fewRiders(), d.onceTier()
	tiers := []map[string]bool{few}
	if once != nil {
		both := maps.Clone(once)
		maps.DeleteFunc(both, func(s string, _ bool) bool { return !few[s] })
		tiers = []map[string]bool{both, once, few}
	}
	if like := d.askedLike(); like != nil {
		tiers = likeFirst(tiers, like)
	}
	// The nearest first: a set given likeFirst earlier ranks above one
	// given later, and spanLike's sets are nested (the nearest within
	// the next), so the widest goes in first and the nearest leads.
	for _, like := range slices.Backward(d.spanLike()) {
		tiers = likeFirst(tiers, like)
	}
	d.drawn, d.loneDrawn = d.cs.drawPreferring(d.cands, d.short, tiers...)
	d.isDrawn = map[string]bool{}
	for _, c := range d.drawn {
		d.isDrawn[string(c.Script)] = true
	}
	rest := slices.DeleteFunc(slices.Clone(d.cands), func(c leak.Profiled) bool { return d.isDrawn[string(c.Script)] })
	more, moreAlone := d.cs.drawPreferring(rest, margin(d.short), tiers...)
	for _, c := range more {
		if !moreAlone[string(c.Script)] {
			d.drawn = append(d.drawn, c)
			d.isDrawn[string(c.Script)] = true
		}
	}
}

// keepSpare keeps the candidates not drawn in spare, with their class,
// and the heights of those above class 1 in near, in random order: the
// blocks of candidates one appearance above a class short first, since
// a filter's false positive may have raised them (one in M = 784,931
// per script and block), and a block of theirs fetched refutes it
// (refute), which gives a chain of the class short.
func (d *roundDraw) keepSpare() {
	cs := d.cs
	cs.spare = cs.spare[:0]
	var above, near []int32
	for _, c := range d.cands {
		if !d.isDrawn[string(c.Script)] {
			sp := d.coverBy[string(c.Script)]
			sp.Profile.Class = uint8(c.Profile.Class)
			cs.spare = append(cs.spare, sp)
			switch hs := d.heights[string(c.Script)]; {
			case sp.Profile.Class > 1 && d.wantFirst[sp.Profile.Class] && !wantedShort(d.short, int(sp.Profile.Class)):
				above = append(above, hs...)
			case sp.Profile.Class > 1:
				near = append(near, hs...)
			}
		}
	}
	rand.Shuffle(len(above), func(i, j int) { above[i], above[j] = above[j], above[i] })
	rand.Shuffle(len(near), func(i, j int) { near[i], near[j] = near[j], near[i] })
	cs.near = append(above, near...)
}

// addPending adds the chains drawn to the pending ones, as covers with
// their profiles (a candidate drawn alone as a chain of its own, under
// a new group), marks their scripts not to be drawn again and returns
// them as members.
func (d *roundDraw) addPending() []member {
	cs := d.cs
	var added []member
	chainOf := map[uint64]int{}
	for _, c := range d.drawn {
		hs := d.heights[string(c.Script)]
		g := d.coverBy[string(c.Script)].Profile.Group
		if d.loneDrawn[string(c.Script)] {
			g = cs.nextGroup
			cs.nextGroup++
		}
		i, ok := chainOf[g]
		if !ok || g == 0 {
			i = len(cs.pending)
			chainOf[g] = i
			cs.pending = append(cs.pending, pendingChain{})
		}
		m := member{script: c.Script, heights: hs, group: g}
		cand := d.coverBy[string(c.Script)].Profile
		cs.pending[i].covers = append(cs.pending[i].covers, cover.Cover{Script: c.Script, Profile: cover.Profile{
			Class: uint8(c.Profile.Class), Type: uint8(leak.TypeOf(c.Script)), First: hs[0], Drawn: cs.to, Group: g,
			Riders: cand.Riders, Read: cand.Read}})
		cs.pending[i].members = append(cs.pending[i].members, m)
		if cs.skip == nil {
			cs.skip = map[string]bool{}
		}
		cs.skip[string(c.Script)] = true
		added = append(added, m)
	}
	return added
}

// walletRiders is the riders per appearance of a script in a
// transaction of a wallet's own shape, which the draw takes first
// (fewRiders): one coin spent, a payment and its change, the script
// beside the other output and the coin its input spends, whose public
// key a basic filter's reader may take for a P2PKH's or a P2SH's.
const walletRiders = 3

// fewRiders are the scripts of the candidate chains every member of
// which sits, in the blocks read (the block it was found in), beside at
// most walletRiders other scripts an appearance: the draw takes them
// first (coverScan.drawPreferring). The reserve holds the chains of
// every transaction, batches and consolidations too, whose riders a
// wallet's scripts seldom have and which group more scripts seen once;
// drawn uniformly, the covers' riders and groups ran above the
// wallet's (pooled AUC of riders per appearance 0.41 to 0.42, of group
// size 0.41 to 0.42, three runs of 64 clients; with the chains of few
// riders first, see the package's figures in covers_riders.go).
func (d *roundDraw) fewRiders() map[string]bool {
	many := map[uint64]bool{}
	per := make([]float64, len(d.cands))
	for i, c := range d.cands {
		cv := d.coverBy[string(c.Script)]
		r, ok := cv.Profile.RidersPer()
		if !ok {
			r = math.Inf(1)
		}
		per[i] = r
		if r > walletRiders && cv.Profile.Group != 0 {
			many[cv.Profile.Group] = true
		}
	}
	out := map[string]bool{}
	for i, c := range d.cands {
		cv := d.coverBy[string(c.Script)]
		if per[i] <= walletRiders && (cv.Profile.Group == 0 || !many[cv.Profile.Group]) {
			out[string(c.Script)] = true
		}
	}
	return out
}
