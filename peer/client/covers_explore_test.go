package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
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
		cs := &coverScan{set: set, from: 100, to: 299, target: 0.3, c: &Client{}, walletAt: map[int32]bool{120: true}, foundNow: map[string]uint8{}}
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

// exploredChain is a range of blocks for a scan's planning without a
// node: each block pays perBlock scripts seen once (candidates of class
// 1, more than a round keeps in reserve), the wallet's script w is paid
// at walletAt, and each of rare, a candidate, at its heights, and is
// matched falsely (its filter matches, its block holds it not) at those
// of falseAt. seen is what the held filters give each script: its
// heights.
type exploredChain struct {
	from, to int32
	blocks   map[int32]*wire.MsgBlock
	seen     map[string][]int32
}

// newExploredChain builds the range from..to.
func newExploredChain(from, to int32, perBlock int, w []byte, walletAt []int32, rare, falseAt map[string][]int32) *exploredChain {
	ec := &exploredChain{from: from, to: to, blocks: map[int32]*wire.MsgBlock{}, seen: map[string][]int32{}}
	pays := map[int32][][]byte{}
	for h := from; h <= to; h++ {
		for i := range perBlock {
			s := append([]byte{0x00, 0x14, byte(h >> 8), byte(h), byte(i)}, bytesOf(0xee, 17)...)
			pays[h] = append(pays[h], s)
		}
	}
	for _, h := range walletAt {
		pays[h] = append(pays[h], w)
	}
	for s, hs := range rare {
		for _, h := range hs {
			pays[h] = append(pays[h], []byte(s))
		}
	}
	for h, outs := range pays {
		ec.blocks[h] = blockOf(nil, outs...)
		for _, s := range outs {
			ec.seen[string(s)] = append(ec.seen[string(s)], h)
		}
	}
	for s, hs := range falseAt {
		ec.seen[s] = append(ec.seen[s], hs...)
	}
	for s := range ec.seen {
		slices.Sort(ec.seen[s])
	}
	return ec
}

// heldSeen is seen on the held filters as a scan profiles them: without
// the matches set keeps as false (cover.Set.Refuted).
func (ec *exploredChain) heldSeen(set *cover.Set, hash func(int32) chainhash.Hash) map[string][]int32 {
	out := make(map[string][]int32, len(ec.seen))
	for s, hs := range ec.seen {
		out[s] = slices.DeleteFunc(slices.Clone(hs), func(h int32) bool { return set.Refuted(cover.MatchKeyOf(hash(h), []byte(s))) })
	}
	return out
}

// at gives the blocks at hs.
func (ec *exploredChain) at(hs []int32) []*wire.MsgBlock {
	out := make([]*wire.MsgBlock, len(hs))
	for i, h := range hs {
		out[i] = ec.blocks[h]
	}
	return out
}

// TestRangeExploredReached: scans short of covers of a class the range
// holds too few chains of, repeated, explore on and reach RangeExplored
// once the sweep has given them every block of the range, not before,
// though each scan finds candidates of other classes (the range holds
// more candidates seen once than a round keeps in reserve, so the sweep
// finds those left out again each lap): only candidates of the classes
// short, or one above (whose extra match a block may refute), can mend
// the covers. The scan at RangeExplored has drawn every chain of the
// class short the range holds, that of one seen three times on the
// filters, once falsely, too (exploring near it shows the false
// match), and says to raise the target (a looser bound).
func TestRangeExploredReached(t *testing.T) {
	const (
		from, to = 100, 299
		// One wallet chain of one script seen twice: at 0.25, three
		// cover chains of class 2.
		target   = 0.25
		maxScans = 14
	)
	w, _ := p2wpkhSpend(1)
	walletAt := []int32{150, 250}
	c2 := string(append([]byte{0x00, 0x14}, bytesOf(0xc2, 20)...))
	c3 := string(append([]byte{0x00, 0x14}, bytesOf(0xc3, 20)...))
	for _, tc := range []struct {
		name    string
		rare    map[string][]int32 // candidates of the class short
		falseAt map[string][]int32
	}{
		{"no chain of the class", nil, nil},
		{"one chain of the class", map[string][]int32{c2: {130, 230}}, nil},
		{"one chain of the class, one above by a false match", map[string][]int32{c2: {130, 230}, c3: {140, 240}}, map[string][]int32{c3: {280}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The chain holds blocks below from too: the covers' margin
			// (rangeMargin) is of the range explored.
			ec := newExploredChain(max(from-maxCoverMargin, 0), to, 24, w, walletAt, tc.rare, tc.falseAt)
			set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
			if err != nil {
				t.Fatal(err)
			}
			c := &Client{covers: set}
			explored := 0
			lo := int32(from) // the first height of the range explored
			for scan := 1; ; scan++ {
				if scan > maxScans {
					t.Fatalf("%d scans short (%d blocks explored of the range's %d) never reached RangeExplored", maxScans, explored, to-lo+1)
				}
				cs, err := c.startCovers([][]byte{w}, from, to)
				if err != nil {
					t.Fatal(err)
				}
				lo = cs.from
				cs.hashOf = func(h int32) chainhash.Hash { return chainhash.Hash{byte(h), byte(h >> 8), 0xdd} }
				cs.blocksAt = ec.at
				cs.seen = ec.heldSeen(set, cs.hashOf)
				cs.hot = 16
				cs.walletHeights = [][]int32{walletAt}
				cs.reprofileWallet()
				cs.walletAt = map[int32]bool{}
				for _, h := range walletAt {
					cs.walletAt[h] = true
				}
				cs.labelled = maps.Clone(cs.walletAt)
				cs.target = target
				_, err = cs.planProfiled(context.Background(), nil, nil)
				var e *PrivacyTargetError
				if !errors.As(err, &e) {
					t.Fatalf("scan %d: %v, want a *PrivacyTargetError", scan, err)
				}
				explored += e.Explored
				if e.Short < 3-len(tc.rare) || e.Short > 3 || !slices.Equal(e.ShortClasses, []int{2}) {
					t.Fatalf("scan %d: %d chains short of classes %v, want %d to 3 of class 2: %v", scan, e.Short, e.ShortClasses, 3-len(tc.rare), e)
				}
				t.Logf("scan %d: %d blocks explored (%d in all), %d candidates of the class short found, %d chains short", scan, e.Explored, explored, e.Found, e.Short)
				if !e.RangeExplored {
					continue
				}
				if e.Short != 3-len(tc.rare) {
					t.Errorf("RangeExplored with %d chains short, want %d: the range's candidates of class 2 not drawn", e.Short, 3-len(tc.rare))
				}
				if explored < int(to-lo+1)-len(walletAt) {
					t.Fatalf("scan %d: RangeExplored with %d blocks explored of the range's %d", scan, explored, to-lo+1)
				}
				for s := range tc.rare {
					if !slices.ContainsFunc(set.Reserve(), func(r cover.Cover) bool { return string(r.Script) == s }) {
						t.Errorf("RangeExplored with the candidate of class 2 not in reserve")
					}
				}
				for _, want := range []string{"too few cover candidates", "raise the target"} {
					if !strings.Contains(e.Error(), want) {
						t.Errorf("%q does not say %q", e.Error(), want)
					}
				}
				t.Logf("RangeExplored at scan %d, %d blocks explored of %d, %d in reserve: %v", scan, explored, to-lo+1, len(set.Reserve()), e)
				return
			}
		})
	}
}

// TestExploreRoom: exploring leaves room for the chains still short
// only where the reserve holds a candidate of a class short (or one
// above) that the scan may still draw; a first scan's empty reserve, or
// one holding only the candidates the scan found, drew or turned down,
// or of other classes, holds none back; and room that cannot hold the
// chains short is not explored at all.
func TestExploreRoom(t *testing.T) {
	script := func(i byte) []byte { s, _ := p2wpkhSpend(i); return s }
	short := map[leak.Profile]int{{Class: 3}: 2} // 2 chains, the wallet's largest class 3: 6 blocks
	tests := []struct {
		name    string
		reserve []uint8 // the classes of the reserve's candidates, scripts 10, 11, ...
		found   bool    // the first candidate found by the scan
		skipped bool    // the first candidate drawn or turned down by it
		room    int
		want    int
	}{
		{"an empty reserve", nil, false, false, 20, 20},
		{"a candidate of the class short", []uint8{3}, false, false, 20, 14},
		{"a candidate one class above", []uint8{4}, false, false, 20, 14},
		{"only of another class", []uint8{1, 2, 5}, false, false, 20, 20},
		{"only found by the scan", []uint8{3}, true, false, 20, 20},
		{"only drawn or turned down", []uint8{3}, false, true, 20, 20},
		{"found by the scan, and another not", []uint8{3, 3}, true, false, 20, 14},
		{"an empty reserve, room for the chains short and no more", nil, false, false, 6, 6},
		{"an empty reserve, no room for the chains short", nil, false, false, 5, -1},
		{"a candidate drawable, no room for the chains short", []uint8{3}, false, false, 2, -4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range tt.reserve {
				s := script(byte(10 + i))
				if err := set.AddReserve(cover.Cover{Script: s, Profile: cover.Profile{Class: k, Type: uint8(leak.TypeOf(s)), Group: uint64(10 + i)}}); err != nil {
					t.Fatal(err)
				}
			}
			cs := &coverScan{set: set, largest: 3, foundNow: map[string]uint8{}, skip: map[string]bool{}}
			if tt.found {
				cs.foundNow[string(script(10))] = 3
			}
			if tt.skipped {
				cs.skip[string(script(10))] = true
			}
			if got := cs.exploreRoom(short, 2, tt.room); got != tt.want {
				t.Errorf("exploreRoom = %d, want %d", got, tt.want)
			}
		})
	}
}
