package client

import (
	"bytes"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/cover"
)

// TestDecoysOfFetchedOnPurpose: the candidates whose blocks exploring
// near them fetches, all of them (one with a block not fetched matches
// nothing), and the chains drawn whose blocks a scan fetched
// and that were left out, are kept as decoys in the cover file; a chain
// added as covers is not; the leak report's decoys (decoysOf) are those
// and the scripts in reserve of a cover's or a decoy's chain, not a
// script in reserve alone nor of another chain.
func TestDecoysOfFetchedOnPurpose(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	s := func(i byte) []byte { sc, _ := p2wpkhSpend(i); return sc }
	entry := func(i byte, group uint64) cover.Cover {
		return cover.Cover{Script: s(i), Profile: cover.Profile{Class: 2, Type: 2, First: 150, Drawn: 299, Group: group}}
	}
	// near's blocks are the near heights, partly's one of them and one
	// never fetched, far's none.
	near, partly, far := entry(1, 0), entry(9, 0), entry(2, 0)
	cs := &coverScan{set: set, from: 100, to: 299, near: []int32{150, 170},
		spare: []cover.Cover{near, partly, far},
		seen:  map[string][]int32{string(near.Script): {150, 170}, string(partly.Script): {150, 99}, string(far.Script): {250, 260}}}
	got := cs.exploreNext(4)
	if !slices.Contains(got, 150) || !slices.Contains(got, 170) {
		t.Fatalf("explored %v, want the near heights 150 and 170 first", got)
	}
	// A chain of group 7 added as covers, one of group 8 left out.
	kept, left := entry(3, 7), entry(4, 8)
	if err := set.Add(kept); err != nil {
		t.Fatal(err)
	}
	cs.decoyLeftOut([][]byte{kept.Script, left.Script})
	want := [][]byte{near.Script, left.Script}
	if d := set.Decoys(); !slices.EqualFunc(d, want, bytes.Equal) {
		t.Fatalf("decoys %x, want the near candidate's and the chain left out's %x", d, want)
	}
	// In reserve: a mate of the cover's chain (7), of the decoy's (8),
	// of another chain (9) and a script alone (0).
	for _, r := range []cover.Cover{left, entry(5, 7), entry(6, 8), entry(7, 9), entry(8, 0)} {
		if err := set.AddReserve(r); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, s(5), s(6))
	if d := decoysOf(set); !slices.EqualFunc(d, want, bytes.Equal) {
		t.Errorf("the report's decoys %x, want %x", d, want)
	}
	if len(cs.warnings) != 0 {
		t.Errorf("warnings %q", cs.warnings)
	}
}

// TestDecoysFullKeepsFetched: once the cover file holds MaxDecoys
// decoys, a scan makes no more: it does not explore near candidates
// (whose blocks would make decoys of them), and every chain it fetched,
// settled or turned down, is kept as covers rather than left out, with
// a warning; so no script fetched on purpose is left for the leak report
// to count as chance. With room, exploring near goes on.
func TestDecoysFullKeepsFetched(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	s := func(i byte) []byte { sc, _ := p2wpkhSpend(i); return sc }
	entry := func(i byte, group uint64) cover.Cover {
		return cover.Cover{Script: s(i), Profile: cover.Profile{Class: 2, Type: 2, First: 150, Drawn: 299, Group: group}}
	}
	near := entry(1, 0)
	newScan := func() *coverScan {
		return &coverScan{set: set, from: 100, to: 299, near: []int32{150, 170}, spare: []cover.Cover{near},
			seen: map[string][]int32{string(near.Script): {150, 170}}}
	}
	if got := newScan().exploreNext(4); !slices.Contains(got, 150) || !slices.Contains(got, 170) {
		t.Fatalf("with room for decoys, explored %v, want the near heights 150 and 170", got)
	}
	for i := len(set.Decoys()); i < cover.MaxDecoys; i++ {
		d := append([]byte{0x00, 0x14}, make([]byte, 20)...)
		d[2], d[3], d[4] = 0xde, byte(i>>8), byte(i)
		if err := set.AddDecoy(d); err != nil {
			t.Fatalf("decoy %d: %v", i, err)
		}
	}
	cs := newScan()
	if got := cs.exploreNext(4); slices.Contains(got, 150) && slices.Contains(got, 170) {
		t.Errorf("with the decoys full, explored the near heights: %v", got)
	}
	// A chain settled and one turned down, both fetched.
	settled, turned := entry(3, 7), entry(4, 8)
	cs.pending = []pendingChain{{covers: []cover.Cover{settled}, members: []member{{script: settled.Script, heights: []int32{150}, group: 7}}}}
	cs.turned = []pendingChain{{covers: []cover.Cover{turned}, members: []member{{script: turned.Script, heights: []int32{170}, group: 8}}}}
	cs.keepFetched()
	cs.commit()
	inUse := set.Scripts()
	for _, c := range []cover.Cover{settled, turned} {
		if !slices.ContainsFunc(inUse, func(x []byte) bool { return bytes.Equal(x, c.Script) }) {
			t.Errorf("chain %x fetched with the decoys full is not a cover", c.Script)
		}
	}
	if cs.readmitted != 1 || len(cs.warnings) != 1 {
		t.Errorf("%d chains taken back, warnings %q: want 1 and one warning", cs.readmitted, cs.warnings)
	}
	if n := len(set.Decoys()); n != cover.MaxDecoys {
		t.Errorf("%d decoys, want %d", n, cover.MaxDecoys)
	}
}
