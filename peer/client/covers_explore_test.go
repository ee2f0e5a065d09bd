package client

import (
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
