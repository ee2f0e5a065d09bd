package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/cover"
)

// TestExploreBesideShortScan: a scan whose covers stay short with every
// chain drawn, those settling turned down included, fetches none of
// them (it stops before the plan), so exploring leaves no room for
// them: chains drawn that fill the bound leave it room to explore.
// Where the chains turned down would close the gap, or the scan may
// fetch short covers (Config.AllowShortCovers), the room is kept for
// the chains drawn.
func TestExploreBesideShortScan(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	script := func(i byte) []byte { s, _ := p2wpkhSpend(i); return s }
	chain := func(i byte, h int32) pendingChain {
		return pendingChain{members: []member{{script: script(i), heights: []int32{h}, group: uint64(i)}}}
	}
	newScan := func(allowShort bool) *coverScan {
		cs := &coverScan{set: set, from: 100, to: 299, target: 0.3, c: &Client{cfg: Config{AllowShortCovers: allowShort}}}
		// One wallet chain of one script seen once: at 0.3, three cover
		// chains of its shape.
		cs.walletProf = cs.profiles([]member{{script: script(1), heights: []int32{150}, group: 1}})
		cs.pending = []pendingChain{chain(2, 151), chain(3, 152)}
		return cs
	}
	const bound = 2
	cs := newScan(false)
	if n := chainsShort(cs.need()); n != 1 {
		t.Fatalf("%d chains short with two drawn, want 1", n)
	}
	if r := cs.room(bound, cs.withPending(nil)); r != 0 {
		t.Fatalf("room beside the chains drawn %d, want 0", r)
	}
	if r := cs.room(bound, cs.exploreBeside(nil)); r != bound {
		t.Errorf("short with every chain drawn: room to explore %d, want the bound %d", r, bound)
	}
	cs.turned = []pendingChain{chain(4, 153)}
	if r := cs.room(bound, cs.exploreBeside(nil)); r != 0 {
		t.Errorf("a chain turned down closes the gap: room to explore %d, want 0", r)
	}
	if len(cs.pending) != 2 || len(cs.turned) != 1 {
		t.Errorf("pending %d and turned %d chains changed, want 2 and 1", len(cs.pending), len(cs.turned))
	}
	cs = newScan(true)
	if r := cs.room(bound, cs.exploreBeside(nil)); r != 0 {
		t.Errorf("short covers allowed: room to explore %d, want 0", r)
	}
}

// TestNeedWithLeavesPending: the need of the chains pending with others
// (needWith), as shortAnyway and readmit weigh it, changes no pending
// chain; readmit takes back only the chains turned down that leave
// fewer short, and trim leaves out only the chains beyond the need.
func TestNeedWithLeavesPending(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	script := func(i byte) []byte { s, _ := p2wpkhSpend(i); return s }
	chain := func(i byte) pendingChain {
		return pendingChain{members: []member{{script: script(i), heights: []int32{150 + int32(i)}, group: uint64(i)}}}
	}
	newScan := func(pending, turned []byte) *coverScan {
		cs := &coverScan{set: set, from: 100, to: 299, target: 0.3}
		// One wallet chain of one script seen once: at 0.3, three cover
		// chains of its shape.
		cs.walletProf = cs.profiles([]member{{script: script(1), heights: []int32{120}, group: 1}})
		for _, i := range pending {
			cs.pending = append(cs.pending, chain(i))
		}
		for _, i := range turned {
			cs.turned = append(cs.turned, chain(i))
		}
		return cs
	}
	pendingOf := func(cs *coverScan) []byte {
		var out []byte
		for _, m := range cs.pendingMembers() {
			out = append(out, m.script[2])
		}
		return out
	}
	cs := newScan([]byte{2, 3}, []byte{4})
	before := pendingOf(cs)
	if n := chainsShort(cs.needWith(cs.turned)); n != 0 {
		t.Errorf("%d chains short with the chain turned down, want 0", n)
	}
	if n := chainsShort(cs.needWith(nil)); n != 1 {
		t.Errorf("%d chains short with two pending, want 1", n)
	}
	if cs.shortAnyway() {
		t.Error("short anyway, though the chain turned down closes the gap")
	}
	if !slices.Equal(pendingOf(cs), before) || len(cs.turned) != 1 {
		t.Errorf("weighing the need changed the chains: pending %v (was %v), %d turned down", pendingOf(cs), before, len(cs.turned))
	}
	cs = newScan([]byte{2}, []byte{3, 4, 5})
	if left := cs.readmit(cs.needWith); len(left) != 0 || len(cs.pending) != 3 || cs.readmitted != 2 || cs.turned != nil {
		t.Errorf("readmit: %v left short, %d pending, %d taken back, %d turned down; want none, 3, 2, 0", left, len(cs.pending), cs.readmitted, len(cs.turned))
	}
	cs = newScan([]byte{2, 3, 4, 5, 6}, nil)
	cs.trim()
	if n := len(cs.pending); n != 3 || len(cs.need()) != 0 {
		t.Errorf("trim kept %d chains (need %v), want the 3 the covers need", n, cs.need())
	}
}

// TestShortCountsChainsDrawn: a scan short even with every chain drawn
// explores beside the covers in use only, and the blocks explored then
// leave the chains drawn beyond the bound; the chains short the error
// reports are those short with every chain drawn, not those the blocks
// explored crowded out of the bound. Where the chains drawn would meet
// the target, the error says the bound alone left them out.
func TestShortCountsChainsDrawn(t *testing.T) {
	script := func(i byte) []byte { s, _ := p2wpkhSpend(i); return s }
	chain := func(i byte) pendingChain {
		return pendingChain{members: []member{{script: script(i), heights: []int32{150 + int32(i)}, group: uint64(i)}}}
	}
	for _, tc := range []struct {
		name             string
		drawn            []byte
		short, onlyBound int
	}{
		// One wallet chain of one script seen once: at 0.3, three cover
		// chains of its shape.
		{"two chains drawn of three", []byte{2, 3}, 1, 2},
		{"three chains drawn of three", []byte{2, 3, 4}, 0, 3},
	} {
		set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
		if err != nil {
			t.Fatal(err)
		}
		cs := &coverScan{set: set, from: 100, to: 299, target: 0.3, c: &Client{}, walletAt: map[int32]bool{120: true}, foundNow: map[string]bool{}}
		cs.walletProf = cs.profiles([]member{{script: script(1), heights: []int32{120}, group: 1}})
		for _, i := range tc.drawn {
			cs.pending = append(cs.pending, chain(i))
		}
		// Exploring took the bound of two blocks.
		const bound = 2
		cs.explored = []int32{200, 201}
		_, err = cs.closePlan(bound, nil)
		var e *PrivacyTargetError
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a *PrivacyTargetError", tc.name, err)
		}
		if e.Short != tc.short || e.OnlyBound != tc.onlyBound {
			t.Errorf("%s: %d chains short and %d only for the bound, want %d and %d: %v", tc.name, e.Short, e.OnlyBound, tc.short, tc.onlyBound, e)
		}
		if !slices.Equal(e.ShortClasses, []int{1}) {
			t.Errorf("%s: short classes %v, want [1]", tc.name, e.ShortClasses)
		}
		if want := fmt.Sprintf("%s short only for a bound of %d", nounCount(tc.onlyBound, "cover chain"), bound); tc.short == 0 && !strings.Contains(e.Error(), want) {
			t.Errorf("%s: the error does not say %q: %v", tc.name, want, e)
		}
	}
}
