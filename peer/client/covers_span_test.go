package client

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

func TestChainPlace(t *testing.T) {
	cs := &coverScan{from: 100, to: 200}
	tests := []struct {
		name string
		at   []int32
		want chainPlace
	}{
		{"none", nil, chainPlace{}},
		{"one block", []int32{150}, chainPlace{blocks: 1, span: 0, mean: 0.5}},
		{"across the range", []int32{100, 200, 150}, chainPlace{blocks: 3, span: 1, mean: 0.5}},
		{"capped blocks", []int32{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, chainPlace{blocks: maxAskedBlocks, span: 0.09, mean: 0.045}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := map[int32]bool{}
			for _, h := range tt.at {
				hs[h] = true
			}
			got := cs.placeOf(hs)
			if got.blocks != tt.want.blocks || math.Abs(got.span-tt.want.span) > 1e-9 || math.Abs(got.mean-tt.want.mean) > 1e-9 {
				t.Fatalf("placeOf(%v) = %+v, want %+v", tt.at, got, tt.want)
			}
		})
	}
}

// TestShapedPlacesChainShape: a chain's shape is leak.Shape of its
// members' profiles (the head's class, the chain's length), whatever
// the order of its members, not the profile of the member that came
// last; a script alone is a chain of its own.
func TestShapedPlacesChainShape(t *testing.T) {
	cs := &coverScan{from: 0, to: 100}
	script := func(b byte) []byte { return append([]byte{0x00, 0x14}, bytes.Repeat([]byte{b}, 20)...) }
	paidTwice := member{script: script(1), heights: []int32{10, 70}, group: 7}
	change := member{script: script(2), heights: []int32{70}, group: 7}
	alone := member{script: script(3), heights: []int32{40}}
	tests := []struct {
		name      string
		ms        []member
		class     int
		chain     int
		span      float64
		numChains int
	}{
		{"head first", []member{paidTwice, change}, 2, 2, 0.6, 1},
		{"head last", []member{change, paidTwice}, 2, 2, 0.6, 1},
		{"with a script alone", []member{change, alone, paidTwice}, 2, 2, 0.6, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cs.shapedPlaces(tt.ms)
			if len(got) != tt.numChains {
				t.Fatalf("%d chains, want %d", len(got), tt.numChains)
			}
			sp, ok := got[7]
			if !ok {
				t.Fatalf("no chain of group 7 in %v", got)
			}
			if sp.shape.Class != tt.class || sp.shape.Chain != tt.chain || sp.shape.Era != 0 || sp.shape.Group != 0 {
				t.Errorf("shape %+v, want class %d, chain %d, era and group 0", sp.shape, tt.class, tt.chain)
			}
			if sp.place.blocks != 2 || math.Abs(sp.place.span-tt.span) > 1e-9 {
				t.Errorf("place %+v, want 2 blocks spanning %g", sp.place, tt.span)
			}
		})
	}
}

// TestNearestRanks: each of the wallet's chains takes, round by round,
// the candidate of its shape, as many blocks and a mean height within
// spanTolerance nearest its span that no other took, as long or longer
// in even rounds, shorter in odd ones; met counts the wallet's chains
// some candidate lies like.
func TestNearestRanks(t *testing.T) {
	shape := leak.Profile{Class: 3, Chain: 2, Type: 1}
	other := leak.Profile{Class: 3, Chain: 1, Type: 1}
	at := func(p leak.Profile, span, mean float64) shapedPlace {
		return shapedPlace{p, chainPlace{blocks: 3, span: span, mean: mean}}
	}
	tests := []struct {
		name   string
		wallet map[uint64]shapedPlace
		cands  map[uint64]shapedPlace
		want   map[uint64]int
		met    int
	}{
		{"the nearest longer, then the nearest shorter",
			map[uint64]shapedPlace{1: at(shape, 0.7, 0.5)},
			map[uint64]shapedPlace{10: at(shape, 0.62, 0.5), 11: at(shape, 0.69, 0.5), 12: at(shape, 0.65, 0.5), 13: at(shape, 0.75, 0.5)},
			map[uint64]int{13: 0, 11: 1}, 1},
		{"two wallet chains share them out",
			map[uint64]shapedPlace{1: at(shape, 0.7, 0.5), 2: at(shape, 0.7, 0.52)},
			map[uint64]shapedPlace{10: at(shape, 0.7, 0.5), 11: at(shape, 0.65, 0.5), 12: at(shape, 0.62, 0.5), 14: at(shape, 0.8, 0.5)},
			map[uint64]int{10: 0, 14: 0, 11: 1, 12: 1}, 2},
		{"another shape, length or era left out; a far span ranked, not met",
			map[uint64]shapedPlace{1: at(shape, 0.7, 0.5)},
			map[uint64]shapedPlace{10: at(other, 0.7, 0.5), 11: {shape, chainPlace{blocks: 2, span: 0.7, mean: 0.5}}, 12: at(shape, 0.7, 0.75), 15: at(shape, 0.3, 0.5)},
			map[uint64]int{15: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, met := nearestRanks(tt.wallet, tt.cands)
			if !maps.Equal(got, tt.want) || met != tt.met {
				t.Fatalf("nearestRanks = %v, %d met; want %v, %d", got, met, tt.want, tt.met)
			}
		})
	}
}

func TestChainPlaceLies(t *testing.T) {
	w := chainPlace{blocks: 3, span: 0.7, mean: 0.4}
	tests := []struct {
		name string
		c    chainPlace
		want bool
	}{
		{"same", w, true},
		{"span at the tolerance", chainPlace{3, 0.7 - spanTolerance + 1e-9, 0.4}, true},
		{"span beyond", chainPlace{3, 0.5, 0.4}, false},
		{"mean beyond", chainPlace{3, 0.7, 0.55}, false},
		{"other length", chainPlace{2, 0.7, 0.4}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.lies(w); got != tt.want {
				t.Fatalf("%+v lies like %+v: %v, want %v", tt.c, w, got, tt.want)
			}
		})
	}
}

func TestSpanScore(t *testing.T) {
	tests := []struct {
		name           string
		wallet, covers []float64
		wk, ck         []int
		want           float64
	}{
		{"alike", []float64{0.7, 0.2}, []float64{0.7, 0.2}, []int{3, 2}, []int{3, 2}, 0},
		{"every cover below", []float64{0.7, 0.7}, []float64{0.5, 0.4}, []int{3, 3}, []int{3, 3}, 0.5},
		{"below within one key only", []float64{0.7, 0.2}, []float64{0.5, 0.2}, []int{3, 2}, []int{3, 2}, 0.25},
		{"across keys not compared", []float64{0.7}, []float64{0.1}, []int{3}, []int{2}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spanScore(tt.wallet, tt.covers, tt.wk, tt.ck); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("spanScore = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCoversSpanInRange measures what exploring could find for the
// span (covers_span.go), on the covers' fixture and on
// TestCoversSpanLikeWallet's: every block of the labelled chain's range
// read for candidates (as exploring would, from an empty reserve), it
// counts, for each of the wallet's chains of three or more blocks, the
// candidate chains of the range of its shape and as many blocks, those
// lying like it (chainPlace.lies), those spanning as much as it or
// more, and how near the nearest one lies (the larger of its span's and
// its mean height's distance, shares of the range), and logs them. It
// fails where the wallet has no chain of three or more blocks or the
// range no candidate chain of their shape, where the measure says
// nothing.
func TestCoversSpanInRange(t *testing.T) {
	tests := []struct {
		name    string
		fixture func(t *testing.T) *coversFixture
	}{
		{"covers fixture", func(t *testing.T) *coversFixture { return needCovers(t) }},
		{"span fixture", func(t *testing.T) *coversFixture {
			node := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey("span miner")))
			return buildCoversAmong(t, node, peertest.ShortWalletChain, "span", 300, coversLead, spanOthers)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, long, shaped := spanInRange(t, tt.fixture(t))
			t.Logf("MEASUREMENT %s, every block of the range read for candidates: %s", tt.name, strings.Join(lines, "; "))
			if long == 0 || shaped == 0 {
				t.Fatalf("%d chains of the wallet's of three or more blocks, %d candidate chains of their shape in the range: nothing to measure", long, shaped)
			}
		})
	}
}

// spanInRange reads every block of f's range for candidates and
// returns a line for the range and one for each of the wallet's chains
// of three or more blocks (TestCoversSpanInRange), how many such chains
// the wallet has (long) and the candidate chains of their shape, summed
// over them (shaped).
func spanInRange(t *testing.T, f *coversFixture) (lines []string, long, shaped int) {
	t.Helper()
	from, to := f.chain.Wallets[0].Birth, f.chain.Tip
	blocks := f.blocks(t, from, to)
	var watch [][]byte
	for _, it := range f.watch {
		watch = append(watch, it.Script)
	}
	_, err := coverRun{dir: t.TempDir(), after: func(cl *Client, _ *ScanResult) {
		set, _, err := cover.Open(t.TempDir(), f.node.Params)
		if err != nil {
			t.Fatal(err)
		}
		cs := &coverScan{c: cl, set: set, from: from, to: to, wallet: watch, seen: map[string][]int32{}}
		cs.walletHeights, _ = cs.profile(watch, false)
		_, cs.largest = cs.walletProfiles(cs.walletHeights)
		cs.hot = max(coverHotFactor*cs.largest, 16)
		cands := cs.candidates(blocks, math.MaxInt32)
		scripts := make([][]byte, len(cands))
		for i, c := range cands {
			scripts[i] = c.Script
		}
		var ms []member
		for i, hs := range cs.profileCandidates(scripts) {
			if len(hs) > 0 && len(hs) <= cs.hot {
				ms = append(ms, member{script: cands[i].Script, heights: hs, group: cands[i].Profile.Group})
			}
		}
		chains := cs.shapedPlaces(ms)
		lines = append(lines, fmt.Sprintf("%d blocks, %d candidates, %d candidate chains", len(blocks), len(ms), len(chains)))
		for _, w := range cs.shapedPlaces(cs.walletMembers()) {
			if w.place.blocks < 3 {
				continue
			}
			long++
			n, like, spanned, longer, nearest := 0, 0, 0, 0, math.Inf(1)
			for _, c := range chains {
				if c.shape != w.shape || c.place.blocks != w.place.blocks {
					continue
				}
				n++
				if c.place.lies(w.place) {
					like++
				}
				if c.place.span >= w.place.span-spanTolerance {
					spanned++
				}
				if c.place.span >= w.place.span {
					longer++
				}
				nearest = min(nearest, max(math.Abs(c.place.span-w.place.span), math.Abs(c.place.mean-w.place.mean)))
			}
			shaped += n
			lines = append(lines, fmt.Sprintf("the wallet's chain of %d blocks, span %.2f, mean %.2f: %d candidate chains of its shape, %d lying like it, %d spanning within %g of it or more, %d as much or more, the nearest %.3f away", w.place.blocks, w.place.span, w.place.mean, n, like, spanned, spanTolerance, longer, nearest))
		}
	}}.scan(t, f, relaysTo(t, f, 2))
	if err != nil {
		t.Fatal(err)
	}
	return lines, long, shaped
}
