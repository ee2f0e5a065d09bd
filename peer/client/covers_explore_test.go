package client

import (
	"slices"
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
