package leak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestReportNothingScanned: a report of a session that scanned
// nothing has no scanned range: null in JSON, not -1.
func TestReportNothingScanned(t *testing.T) {
	r := emptyReport(100, 64, DefaultMaxMatches)
	r.measure(0)
	if r.ScannedFrom != nil || r.ScannedTo != nil {
		t.Fatalf("scanned %v..%v", r.ScannedFrom, r.ScannedTo)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"scanned_from":null,"scanned_to":null`)) {
		t.Fatalf("JSON %s", b)
	}
	bitSet(r.scanned, 3)
	bitSet(r.scanned, 9)
	r.measure(0)
	if r.ScannedFrom == nil || *r.ScannedFrom != 103 || *r.ScannedTo != 109 || r.ScannedBlocks != 2 {
		t.Fatalf("scanned %v..%v, %d blocks", r.ScannedFrom, r.ScannedTo, r.ScannedBlocks)
	}
}

// evidenceReport is the report of a scan of blocks 0..199 that fetched
// 10, 20, 30, 40, 100 and 120, with chance placing scripts at random (no
// shifts), over entries and 400 scripts of two appearances elsewhere.
func evidenceReport(entries []universe.IndexEntry) *Report {
	return scanReport("", []int{10, 20, 30, 40, 100, 120}, entries)
}

// ownEvidenceReport is the client's own report (script w labelled its
// own) of the session evidenceReport's attack sees, without the 400
// scripts of chance.
func ownEvidenceReport(entries []universe.IndexEntry) *Report {
	own := emptyReport(0, 200, DefaultMaxMatches)
	own.label = &labelling{own: func(c string) bool { return c == "w" }}
	setAll(own.scanned, 200)
	for _, h := range []int{10, 20, 30, 40, 100, 120} {
		bitSet(own.fetched, h)
	}
	own.measure(-1)
	for i := range entries {
		own.test(&entries[i])
	}
	own.finish()
	return own
}

// scanReport is the report of a session of client that scanned blocks
// 0..199 and fetched those of fetched, with chance placing scripts at
// random (no shifts), over entries and 400 scripts of two appearances
// elsewhere.
func scanReport(client string, fetched []int, entries []universe.IndexEntry) *Report {
	r := emptyReport(0, 200, DefaultMaxMatches)
	r.Client, r.Session = client, client
	setAll(r.scanned, 200)
	for _, h := range fetched {
		bitSet(r.fetched, h)
	}
	r.measure(-1)
	for i := range 400 {
		h := int32(i % 190)
		r.test(&universe.IndexEntry{Candidate: fmt.Sprintf("bg%04d", i), Heights: []int32{h, h + 7}, Txs: [][]uint32{{50}, {51}}})
	}
	for i := range entries {
		r.test(&entries[i])
	}
	r.finish()
	return r
}

// oneTx gives each appearance one transaction, at the positions ts.
func oneTx(ts ...uint32) [][]uint32 {
	out := make([][]uint32, len(ts))
	for i, x := range ts {
		out[i] = []uint32{x}
	}
	return out
}

// classShare is the share of class k's groups that chance, placing the
// scripts at random, does not explain (-1: no such class).
func classShare(r *Report, k uint64) float64 {
	for _, c := range r.ByAppearances {
		if c.Appearances == k {
			return math.Max(float64(c.Groups)-c.ExpectedByChance, 0) / float64(c.Groups)
		}
	}
	return -1
}

// TestNestedAndBatched: the wallet's script w appears in 10, 20, 30 and
// 40 with its payer's change beside it; x appears in 10, 20 and 30 in
// transactions of its own, so the downloads of w's blocks explain it
// whatever its owner (nested: half its class's probability); y, in 40 and
// 100, is not within one group's blocks but within w's and b's together
// (pooled: half its class's too), and w, though x and y hold its blocks,
// is not pooled, for x is explained by w; b sits in 100 in a transaction
// paying five other matches (a batch) and alone in 120: three quarters
// of its class's. Each is warned of.
func TestNestedAndBatched(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "pc", Heights: []int32{10, 20, 30}, Txs: oneTx(1, 1, 1)},
		{Candidate: "x", Heights: []int32{10, 20, 30}, Txs: oneTx(5, 5, 5)},
		{Candidate: "y", Heights: []int32{40, 100}, Txs: oneTx(8, 8)},
		{Candidate: "b", Heights: []int32{100, 120}, Txs: oneTx(7, 3)},
	}
	for i := range 5 {
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("batch%d", i), Heights: []int32{100}, Txs: oneTx(7)})
	}
	r := evidenceReport(entries)
	got := map[string]Match{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	class := func(k uint64) float64 { return classShare(r, k) }
	w, x, y, b := got["w"], got["x"], got["y"], got["b"]
	if w.Probability < 0.99 || w.Nested || w.Batched {
		t.Errorf("w: %+v", w)
	}
	if p := class(3); !x.Nested || x.Group != 0 || math.Abs(x.Probability-p*memberShare) > 1e-9 || p < 0.99 {
		t.Errorf("x: nested %v, P %.4f, class 3 gives %.4f", x.Nested, x.Probability, p)
	}
	if p := class(2); p < 0.5 || !y.Nested || y.Batched || math.Abs(y.Probability-p*memberShare) > 1e-9 {
		t.Errorf("y: nested %v batched %v, P %.4f, class 2 gives %.4f", y.Nested, y.Batched, y.Probability, p)
	}
	if p := class(2); p < 0.5 || !b.Batched || b.Nested || math.Abs(b.Probability-p*memberShareHigh) > 1e-9 {
		t.Errorf("b: batched %v, P %.4f, class 2 gives %.4f", b.Batched, b.Probability, p)
	}
	warnings := strings.Join(r.Warnings, "\n")
	for _, want := range []string{"1 group or match of two or more appearances appears only in blocks of another group", "1 match of two or more appearances sits in transactions paying more than 4 matched scripts at once (batched payments)",
		"1 group or match of two or more appearances appears only in blocks of other groups the wallet's more likely than not, no one of which holds them all", CoversNotRuledOut} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning %q in:\n%s", want, warnings)
		}
	}
	// Without x and the batch, nothing is nested or batched, and no
	// warning says so.
	r = evidenceReport(entries[:2])
	if all := strings.Join(r.Warnings, "\n"); strings.Contains(all, "(nested)") || strings.Contains(all, "(batched)") || strings.Contains(all, "(pooled)") {
		t.Errorf("warnings without nested or batched scripts: %q", r.Warnings)
	}
}

// TestPoissonMeanLow: the lower end of the exact (Garwood) 95% interval
// of a Poisson mean, against published values, and 0 for no count.
func TestPoissonMeanLow(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{0, 0}, {1, 0.0253}, {2, 0.2422}, {5, 1.6235}, {10, 4.7954},
	} {
		if got := poissonMeanLow(c.x); math.Abs(got-c.want) > 5e-4 {
			t.Errorf("poissonMeanLow(%g) = %.4f, want %.4f", c.x, got, c.want)
		}
	}
}

// TestPooledGroupAndAmbiguousSet: a group of two or more appearances
// whose blocks are blocks of other likely groups, none holding them all
// (y and ym, in w's block 40 and h's block 100), is explained by their
// downloads whatever its owner, as a hosted one is: the group has half
// its class's probability, not the whole (pooled groups kept it, and in
// single-wallet captures were right about a quarter of the times they
// said 0.52); and each of an ambiguous set (a1 and a2, the same blocks in
// transactions of their own) has half its group's probability, not the
// whole (one of them, not each, is the wallet's).
func TestPooledGroupAndAmbiguousSet(t *testing.T) {
	r := evidenceReport([]universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "pc", Heights: []int32{10, 20, 30}, Txs: oneTx(1, 1, 1)},
		{Candidate: "h", Heights: []int32{100, 120}, Txs: oneTx(7, 3)},
		{Candidate: "y", Heights: []int32{40, 100}, Txs: oneTx(8, 8)},
		{Candidate: "ym", Heights: []int32{40}, Txs: oneTx(8)},
	})
	got := map[string]Match{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	p := classShare(r, 2)
	if p < 0.5 {
		t.Fatalf("class 2 gives %.3f: y's hosts are not likely", p)
	}
	y := got["y"]
	if y.Group == 0 || !y.Nested {
		t.Fatalf("y: %+v", y)
	}
	if g := r.Groups[y.Group-1]; math.Abs(g.Probability-p*memberShare) > 1e-9 {
		t.Errorf("pooled group %v: P %.4f, want half of class 2's %.4f", g.Members, g.Probability, p)
	}
	if math.Abs(y.Probability-p*memberShare) > 1e-9 {
		t.Errorf("y: P %.4f, want %.4f", y.Probability, p*memberShare)
	}

	r = evidenceReport([]universe.IndexEntry{
		{Candidate: "a1", Heights: []int32{10, 100}, Txs: oneTx(9, 9)},
		{Candidate: "a2", Heights: []int32{10, 100}, Txs: oneTx(10, 10)},
	})
	p = classShare(r, 2)
	if len(r.Groups) != 1 || !r.Groups[0].Ambiguous || math.Abs(r.Groups[0].Probability-p) > 1e-9 || p < 0.5 {
		t.Fatalf("groups %+v, class 2 gives %.4f", r.Groups, p)
	}
	for _, m := range r.Matched {
		if math.Abs(m.Probability-p/2) > 1e-9 || len(m.AmbiguousWith) != 1 || m.ProbabilityHigh < p {
			t.Errorf("%s: P %.4f [%.4f, %.4f], want half the group's %.4f, its interval reaching the group's", m.Candidate, m.Probability, m.ProbabilityLow, m.ProbabilityHigh, p)
		}
	}
}

// TestPassengerInBatches: a payer's change pc reused across three
// payments to the wallet (w in 10 and 20, w2 in 40) and paid once in a
// batch (30, tx 7, with five other outputs) does not ride, for the batch
// gives no one's transaction, yet it sits beside another match in every
// transaction and no match lies wholly in its transactions: the wallet's
// scripts are spent elsewhere (120, 100), with their change. It is a
// passenger, with half its group's probability, not its class's, and is
// warned of. With a one-off output z beside it in 10 (a payee, or the
// payer's change of a payment made once), which lies wholly in its
// transactions, it hosts z as a wallet's script would, and is no
// passenger; but w and w2 beside it are spent in transactions of their
// own, so it is escorted, with three quarters of its class's
// probability (TestEscortedMatch).
func TestPassengerInBatches(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "pc", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 7, 1)},
		{Candidate: "w", Heights: []int32{10, 20, 120}, Txs: oneTx(1, 1, 3)},
		{Candidate: "wc", Heights: []int32{120}, Txs: oneTx(3)},
		{Candidate: "w2", Heights: []int32{40, 100}, Txs: oneTx(1, 2)},
		{Candidate: "w2c", Heights: []int32{100}, Txs: oneTx(2)},
	}
	for i := range 5 {
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("batch%d", i), Heights: []int32{30}, Txs: oneTx(7)})
	}
	for _, c := range []struct {
		name      string
		z         bool
		passenger bool
	}{{"passenger", false, true}, {"hosting a one-off output", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			es := append([]universe.IndexEntry(nil), entries...)
			if c.z {
				es = append(es, universe.IndexEntry{Candidate: "z", Heights: []int32{10}, Txs: oneTx(1)})
			}
			r := evidenceReport(es)
			var pc Match
			for _, m := range r.Matched {
				if m.Candidate == "pc" {
					pc = m
				}
			}
			p := classShare(r, 4)
			if p < 0.99 || pc.Group == 0 || pc.CoLocated || pc.Batched {
				t.Fatalf("pc: %+v, class 4 gives %.4f", pc, p)
			}
			if g := r.Groups[pc.Group-1]; math.Abs(g.Probability-p) > 1e-9 || g.Members[0] != "pc" {
				t.Fatalf("pc's group %v: P %.4f, want class 4's %.4f", g.Members, g.Probability, p)
			}
			// Hosting z, pc is not a passenger but sits beside w and w2,
			// which the wallet spends in transactions of their own
			// (120, 100): it is escorted.
			want := p * memberShareHigh
			if c.passenger {
				want = p * memberShare
			}
			if pc.Passenger != c.passenger || pc.Escorted == c.passenger || math.Abs(pc.Probability-want) > 1e-9 {
				t.Errorf("pc: passenger %v escorted %v, P %.4f, want passenger %v and %.4f", pc.Passenger, pc.Escorted, pc.Probability, c.passenger, want)
			}
			if warned := strings.Contains(strings.Join(r.Warnings, "\n"), "(passenger)"); warned != c.passenger {
				t.Errorf("passenger warning %v, want %v: %q", warned, c.passenger, r.Warnings)
			}
		})
	}
}

// TestGroupingWithUnlistedSingles: the shifts of the null count the
// scripts seen once in their matches' transactions without listing them;
// a match beside one of them rides as it would beside it listed. a (10
// and 20) sits in 10 beside a script seen once and in 20 beside b (20
// and 30): grouped with b only when that script is counted; five of them
// in 10 make it a batch, where no one rides.
func TestGroupingWithUnlistedSingles(t *testing.T) {
	ms := []Match{
		{Candidate: "a", Appearances: 2, Heights: []int32{10, 20}, Transactions: oneTx(1, 1)},
		{Candidate: "b", Appearances: 2, Heights: []int32{20, 30}, Transactions: oneTx(1, 5)},
	}
	for _, c := range []struct {
		name   string
		singly int
		joined bool
	}{{"none", 0, false}, {"one beside a", 1, true}, {"a batch", 5, false}} {
		unlisted := map[uint64]int{}
		if c.singly > 0 {
			unlisted[txKey(10, 1)] = c.singly
		}
		g := groupMatchesWith(ms, true, unlisted)
		if joined := g.find(0) == g.find(1); joined != c.joined || g.riding[0] != c.joined {
			t.Errorf("%s: a and b joined %v, a riding %v; want %v", c.name, joined, g.riding[0], c.joined)
		}
	}
	if g := groupMatchesOf(ms, true); g.find(0) == g.find(1) {
		t.Error("without the null's counts, a joined b")
	}
}

// TestFetchedOutsideRangesScanHull: a node asked for the filters of
// some ranges and for blocks outside them (a client that spreads its
// filter ranges and its fetches over several peers) takes the client to
// have scanned every block from the first to the last it saw scanned:
// the blocks outside its ranges were scanned with filters from
// elsewhere, with their neighbours. Taking its ranges and those blocks
// alone as the scan would count a script's appearances only there, and
// every script of a block fetched outside the ranges would match by
// construction, which shifting the fetched set along the ranges does
// not reproduce: the chance count would be too low and every
// probability too high. A node whose fetched blocks lie in its ranges
// keeps its ranges, gaps and all.
func TestFetchedOutsideRangesScanHull(t *testing.T) {
	hd := &universe.IndexHeader{Version: universe.IndexVersion, First: 0, Hashes: make([]chainhash.Hash, 200)}
	tests := []struct {
		name     string
		view     View
		scanned  uint64
		from, to int32
		hull     bool
	}{
		{"fetched inside", View{ID: "a", Scanned: []HeightRange{{0, 49}, {100, 149}}, Fetched: []int32{10, 120}}, 100, 0, 149, false},
		{"fetched outside", View{ID: "b", Scanned: []HeightRange{{0, 49}}, Fetched: []int32{10, 80, 120}}, 121, 0, 120, true},
		{"fetched below", View{ID: "c", Scanned: []HeightRange{{100, 149}}, Fetched: []int32{60, 120}}, 90, 60, 149, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReport(&tc.view, hd, Options{})
			if r.ScannedBlocks != tc.scanned || *r.ScannedFrom != tc.from || *r.ScannedTo != tc.to {
				t.Errorf("scanned %d blocks, %d..%d; want %d, %d..%d", r.ScannedBlocks, *r.ScannedFrom, *r.ScannedTo, tc.scanned, tc.from, tc.to)
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "outside the filter ranges") })
			if warned != tc.hull {
				t.Errorf("warned of the hull: %v, want %v (%q)", warned, tc.hull, r.Warnings)
			}
		})
	}
}

// TestChainedMember: in the wallet's group (w, in 10, 20, 30 and 40), a
// payer's change pc spent in the next payment to the wallet rides in w's
// transactions in every one of its three blocks and appears less than w:
// it has chainedShare of the group's probability, its interval from
// chainedShareLow to chainedShareHigh of the group's; z, the other
// output of w's transaction in 40, seen once, rides too and has half. A
// client's own report, an upper estimate, leaves pc half.
func TestChainedMember(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "pc", Heights: []int32{10, 20, 30}, Txs: oneTx(1, 1, 1)},
		{Candidate: "z", Heights: []int32{40}, Txs: oneTx(1)},
	}
	r := evidenceReport(entries)
	got := map[string]Match{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	pc, z := got["pc"], got["z"]
	if pc.Group == 0 || pc.Group != z.Group || !pc.CoLocated {
		t.Fatalf("pc %+v, z %+v: want both riding in w's group", pc, z)
	}
	g := r.Groups[pc.Group-1]
	if g.Probability < 0.99 {
		t.Fatalf("group %v: P %.4f", g.Members, g.Probability)
	}
	if math.Abs(pc.Probability-g.Probability*chainedShare) > 1e-9 || math.Abs(pc.ProbabilityLow-g.ProbabilityLow*chainedShareLow) > 1e-9 || math.Abs(pc.ProbabilityHigh-g.ProbabilityHigh*chainedShareHigh) > 1e-9 {
		t.Errorf("pc: P %.4f [%.4f, %.4f], group %.4f [%.4f, %.4f]", pc.Probability, pc.ProbabilityLow, pc.ProbabilityHigh, g.Probability, g.ProbabilityLow, g.ProbabilityHigh)
	}
	if math.Abs(z.Probability-g.Probability*memberShare) > 1e-9 {
		t.Errorf("z: P %.4f, want half the group's %.4f", z.Probability, g.Probability)
	}
	own := ownEvidenceReport(entries)
	found := false
	for _, m := range own.Matched {
		if m.Candidate != "pc" {
			continue
		}
		found = true
		if m.Group == 0 || math.Abs(m.Probability-own.Groups[m.Group-1].Probability*memberShare) > 1e-9 {
			t.Errorf("own report: pc %+v, want half its group's probability", m)
		}
	}
	if !found {
		t.Error("own report: pc not matched")
	}
}

// TestPooledGroupKeptForSeveralWallets: the pooled group of
// TestPooledGroupAndAmbiguousSet (y and ym) has half its class's
// probability, until the session is found to fetch for several wallets
// (keepPooledGroups): the group then has its class's, and its members
// keep half their shares.
func TestPooledGroupKeptForSeveralWallets(t *testing.T) {
	r := evidenceReport([]universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "pc", Heights: []int32{10, 20, 30}, Txs: oneTx(1, 1, 1)},
		{Candidate: "h", Heights: []int32{100, 120}, Txs: oneTx(7, 3)},
		{Candidate: "y", Heights: []int32{40, 100}, Txs: oneTx(8, 8)},
		{Candidate: "ym", Heights: []int32{40}, Txs: oneTx(8)},
	})
	p := classShare(r, 2)
	var y Match
	for _, m := range r.Matched {
		if m.Candidate == "y" {
			y = m
		}
	}
	if y.Group == 0 || !y.Nested || p < 0.5 {
		t.Fatalf("y: %+v, class 2 gives %.4f", y, p)
	}
	if g := r.Groups[y.Group-1]; math.Abs(g.Probability-p*memberShare) > 1e-9 {
		t.Fatalf("pooled group %v: P %.4f, want half of %.4f", g.Members, g.Probability, p)
	}
	r.keepPooledGroups()
	if g := r.Groups[y.Group-1]; math.Abs(g.Probability-p) > 1e-9 {
		t.Errorf("pooled group %v of a session of several wallets: P %.4f, want its class's %.4f", g.Members, g.Probability, p)
	}
	for _, m := range r.Matched {
		if m.Candidate == "y" && math.Abs(m.Probability-p*memberShare) > 1e-9 {
			t.Errorf("y: P %.4f, want half its class's %.4f", m.Probability, p)
		}
	}
}

// TestEscortedMatch: a payer's change pc reused across three payments to
// the wallet (10, 20 and 30, transaction 1) and spent alone (40) sits
// beside the wallet's fresh addresses a1, a2 and a3, which the wallet
// spends later in transactions of their own (100 and 120): it is
// escorted, with three quarters of its class's probability, and warned
// of. The wallet's script w, paid in 100 and 120 beside its payers'
// change seen only there and spent alone in 40, is not. A client's own report leaves pc whole.
func TestEscortedMatch(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "pc", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 9)},
		{Candidate: "a1", Heights: []int32{10, 100}, Txs: oneTx(1, 4)},
		{Candidate: "a2", Heights: []int32{20, 100}, Txs: oneTx(1, 5)},
		{Candidate: "a3", Heights: []int32{30, 120}, Txs: oneTx(1, 4)},
		{Candidate: "w", Heights: []int32{40, 100, 120}, Txs: oneTx(3, 7, 7)},
		{Candidate: "c1", Heights: []int32{100}, Txs: oneTx(7)},
		{Candidate: "c2", Heights: []int32{120}, Txs: oneTx(7)},
	}
	r := evidenceReport(entries)
	got := map[string]Match{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	pc, w := got["pc"], got["w"]
	if pc.CoLocated || w.CoLocated || pc.Group != 0 {
		t.Fatalf("pc %+v, w %+v: neither should ride, pc alone", pc, w)
	}
	if !pc.Escorted || w.Escorted {
		t.Fatalf("escorted: pc %v, w %v; want pc only", pc.Escorted, w.Escorted)
	}
	p := classShare(r, 4)
	if pc.Nested {
		p *= memberShare // pooled: a1's, a2's and a3's blocks and w's hold its own
	}
	if p < 0.25 || math.Abs(pc.Probability-p*memberShareHigh) > 1e-9 {
		t.Errorf("pc: P %.4f, want three quarters of the %.4f it would have", pc.Probability, p)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "sit, in at least half their transactions, beside other matches that appear in transactions of their own elsewhere") {
		t.Errorf("warnings %q: none of the escorted match", r.Warnings)
	}
	own := ownEvidenceReport(entries)
	for _, m := range own.Matched {
		if m.Escorted {
			t.Errorf("own report: %s escorted", m.Candidate)
		}
	}
}

// TestSettledMember: the wallet's script w appears in 10, 20, 30 and 40;
// in 40 its change c rides beside it, two matches in the transaction, and
// the payee p created there is spent in 50, which the session scanned and
// did not fetch: the counterparty spent it elsewhere, so c is settled
// (settledShare of its group's). z rides beside w in 20 likewise, but its
// transaction holds a third match, q, so p's like, spent in 60, settles
// neither: half the group's. y rides beside w and s in 30, where s was
// created and spent in 40, a block the session fetched: nothing settles
// y. The own report settles c too.
func TestSettledMember(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "c", Heights: []int32{40}, Txs: oneTx(1)},
		{Candidate: "p", Heights: []int32{40, 50}, Txs: oneTx(1, 3)},
		{Candidate: "z", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "q", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "p2", Heights: []int32{20, 60}, Txs: oneTx(1, 3)},
		{Candidate: "y", Heights: []int32{30}, Txs: oneTx(1)},
		{Candidate: "s", Heights: []int32{30, 40}, Txs: oneTx(1, 2)},
	}
	check := func(name string, r *Report, want map[string]float64, settled map[string]bool) {
		t.Helper()
		for _, m := range r.Matched {
			share, ok := want[m.Candidate]
			if !ok {
				continue
			}
			if m.Group == 0 {
				t.Errorf("%s: %s in no group", name, m.Candidate)
				continue
			}
			g := r.Groups[m.Group-1]
			if math.Abs(m.Probability-g.Probability*share) > 1e-9 || m.Settled != settled[m.Candidate] {
				t.Errorf("%s: %s P %.4f settled %v, group %.4f: want %.2f of it, settled %v", name, m.Candidate, m.Probability, m.Settled, g.Probability, share, settled[m.Candidate])
			}
			delete(want, m.Candidate)
		}
		for c := range want {
			t.Errorf("%s: %s not matched", name, c)
		}
	}
	r := evidenceReport(entries)
	check("attack", r, map[string]float64{"c": settledShare, "z": memberShare, "q": memberShare, "y": memberShare}, map[string]bool{"c": true})
	own := ownEvidenceReport(entries)
	check("own report", own, map[string]float64{"c": settledShare, "z": memberShare}, map[string]bool{"c": true})
}

// TestBesidePaymentMember: a payer pays the wallet's fresh address a in
// 10 (transaction 1), beside its change c and another payee p, which is
// spent in 50, a block the session scanned and did not fetch; the wallet
// spends a in 100. c rides beside a, the transaction's two matches, and
// p settles it, but a was created there: the transaction pays a, so c
// is the payer's change, beside a payment (paidShare of its group's),
// not settled. The wallet's own w, created in 20 and spent in 30 beside
// its change c2 and the payee p2 (spent in 60), settles c2 as before.
// The own report settles c.
func TestBesidePaymentMember(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "a", Heights: []int32{10, 100}, Txs: oneTx(1, 2)},
		{Candidate: "c", Heights: []int32{10}, Txs: oneTx(1)},
		{Candidate: "p", Heights: []int32{10, 50}, Txs: oneTx(1, 3)},
		{Candidate: "w", Heights: []int32{20, 30}, Txs: oneTx(1, 1)},
		{Candidate: "c2", Heights: []int32{30}, Txs: oneTx(1)},
		{Candidate: "p2", Heights: []int32{30, 60}, Txs: oneTx(1, 3)},
	}
	type want struct {
		share           float64
		settled, beside bool
	}
	for _, c := range []struct {
		name string
		r    *Report
		want map[string]want
	}{
		{"attack", evidenceReport(entries), map[string]want{"c": {paidShare, false, true}, "c2": {settledShare, true, false}}},
		{"own report", ownEvidenceReport(entries), map[string]want{"c": {settledShare, true, false}, "c2": {settledShare, true, false}}},
	} {
		for _, m := range c.r.Matched {
			w, ok := c.want[m.Candidate]
			if !ok {
				continue
			}
			delete(c.want, m.Candidate)
			if m.Group == 0 {
				t.Errorf("%s: %s in no group", c.name, m.Candidate)
				continue
			}
			g := c.r.Groups[m.Group-1]
			if math.Abs(m.Probability-g.Probability*w.share) > 1e-9 || m.Settled != w.settled || m.BesidePayment != w.beside {
				t.Errorf("%s: %s P %.4f (group %.4f) settled %v beside a payment %v: want %.2f of the group's, settled %v, beside %v",
					c.name, m.Candidate, m.Probability, g.Probability, m.Settled, m.BesidePayment, w.share, w.settled, w.beside)
			}
		}
		for cand := range c.want {
			t.Errorf("%s: %s not matched", c.name, cand)
		}
	}
}

// TestPaidMember: the wallet's script w appears in 10, 20, 30 and 40; in
// 40 the payer's change c rides beside it, in a transaction that spends
// the payer's coin pin, received in 5, a block the session did not fetch:
// c is paid (paidShare of its group's). In 20, z rides beside w and the
// coin pf, received in 10, a block the session fetched (pf is a match):
// z is not paid. In 30, b1, b2 and b3 ride beside w in a transaction of
// four matches (a payer's batch): paid too. The own report leaves c half
// its group's.
func TestPaidMember(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "c", Heights: []int32{40}, Txs: oneTx(1)},
		{Candidate: "pin", Heights: []int32{5, 40}, Txs: oneTx(3, 1)},
		{Candidate: "z", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "pf", Heights: []int32{10, 20}, Txs: oneTx(2, 1)},
		{Candidate: "b1", Heights: []int32{30}, Txs: oneTx(1)},
		{Candidate: "b2", Heights: []int32{30}, Txs: oneTx(1)},
		{Candidate: "b3", Heights: []int32{30}, Txs: oneTx(1)},
	}
	paid := map[string]bool{"c": true, "b1": true, "b2": true, "b3": true}
	shares := func(r *Report) map[string]float64 {
		out := map[string]float64{}
		for _, m := range r.Matched {
			if m.Group > 0 {
				out[m.Candidate] = m.Probability / r.Groups[m.Group-1].Probability
			}
			if m.Paid != (paid[m.Candidate] && r.label == nil) {
				t.Errorf("%s: paid %v", m.Candidate, m.Paid)
			}
		}
		return out
	}
	got := shares(evidenceReport(entries))
	if math.Abs(got["c"]-paidShare) > 1e-9 || math.Abs(got["b1"]-paidShare) > 1e-9 || math.Abs(got["z"]-memberShare) > 1e-9 {
		t.Errorf("attack: shares of the group's %v, want c and b1 %.2f, z %.2f", got, paidShare, memberShare)
	}
	own := ownEvidenceReport(entries)
	if got := shares(own); math.Abs(got["c"]-memberShare) > 1e-9 {
		t.Errorf("own report: shares of the group's %v, want c %.2f", got, memberShare)
	}
}

// TestChainedSettledMember: a payer's change pc spent in the next
// payment to the wallet rides beside w in 10, 20 and 30 (as in
// TestChainedMember), each transaction holding the two matches only, and
// the one in 30 created p, spent in 50, which the session scanned and
// did not fetch: pc is chained and settled, chainedSettledShare of its
// group's probability, its interval chainedSettledShareLow to
// chainedSettledShareHigh of the group's. Without p it is chained only
// (chainedShare).
func TestChainedSettledMember(t *testing.T) {
	for _, c := range []struct {
		name        string
		spent       bool
		p, lo, hi   float64
		wantSettled bool
	}{
		{"spent elsewhere", true, chainedSettledShare, chainedSettledShareLow, chainedSettledShareHigh, true},
		{"not spent elsewhere", false, chainedShare, chainedShareLow, chainedShareHigh, false},
	} {
		entries := []universe.IndexEntry{
			{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
			{Candidate: "pc", Heights: []int32{10, 20, 30}, Txs: oneTx(1, 1, 1)},
		}
		if c.spent {
			entries = append(entries, universe.IndexEntry{Candidate: "p", Heights: []int32{30, 50}, Txs: oneTx(1, 2)})
		}
		slices.SortFunc(entries, func(a, b universe.IndexEntry) int { return strings.Compare(a.Candidate, b.Candidate) })
		r := evidenceReport(entries)
		var pc *Match
		for i := range r.Matched {
			if r.Matched[i].Candidate == "pc" {
				pc = &r.Matched[i]
			}
		}
		if pc == nil || pc.Group == 0 || !pc.CoLocated {
			t.Fatalf("%s: pc %+v: want it riding in w's group", c.name, pc)
		}
		g := r.Groups[pc.Group-1]
		if g.Probability < 0.99 {
			t.Fatalf("%s: group %v: P %.4f", c.name, g.Members, g.Probability)
		}
		if pc.Settled != c.wantSettled || math.Abs(pc.Probability-g.Probability*c.p) > 1e-9 || math.Abs(pc.ProbabilityLow-g.ProbabilityLow*c.lo) > 1e-9 || math.Abs(pc.ProbabilityHigh-g.ProbabilityHigh*c.hi) > 1e-9 {
			t.Errorf("%s: pc P %.4f [%.4f, %.4f] settled %v, group %.4f [%.4f, %.4f]: want %.2f [%.2f, %.2f] of it, settled %v", c.name, pc.Probability, pc.ProbabilityLow, pc.ProbabilityHigh, pc.Settled, g.Probability, g.ProbabilityLow, g.ProbabilityHigh, c.p, c.lo, c.hi, c.wantSettled)
		}
	}
}

// TestPaidOnlyGroup: a group whose members beside its most appearing one
// are all paid (x in 10 and 20, beside c in 10, whose transaction spends
// pin, seen in 5, which the session did not fetch) has a tenth of its
// class's probability, its interval up to half of it, and each member at
// most that; without pin, c rides unpaid and the group keeps its class's.
// The same class's group of w (30 and 40, beside z, not paid) keeps it
// either way, and a client's own report never lowers a group so.
func TestPaidOnlyGroup(t *testing.T) {
	base := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{30, 40}, Txs: oneTx(1, 1)},
		{Candidate: "z", Heights: []int32{40}, Txs: oneTx(1)},
		{Candidate: "x", Heights: []int32{10, 20}, Txs: oneTx(1, 1)},
		{Candidate: "c", Heights: []int32{10}, Txs: oneTx(1)},
	}
	pin := universe.IndexEntry{Candidate: "pin", Heights: []int32{5, 10}, Txs: oneTx(3, 1)}
	for _, tc := range []struct {
		name    string
		entries []universe.IndexEntry
		own     bool
		lowered bool
	}{
		{"paid", append(slices.Clone(base), pin), false, true},
		{"not paid", base, false, false},
		{"own report", append(slices.Clone(base), pin), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := evidenceReport(tc.entries)
			if tc.own {
				r = ownEvidenceReport(tc.entries)
			}
			group := map[string]Group{}
			for _, g := range r.Groups {
				group[g.Members[0]] = g
			}
			gx, gw := group["x"], group["w"]
			if len(gx.Members) != 2 || len(gw.Members) != 2 || gw.Probability <= 0 {
				t.Fatalf("groups %+v: want x's and w's, of two members each", r.Groups)
			}
			want, wantHigh := gw.Probability, gw.ProbabilityHigh
			if tc.lowered {
				want, wantHigh = gw.Probability*paidShare, gw.ProbabilityHigh*paidShareHigh
			}
			if math.Abs(gx.Probability-want) > 1e-9 || math.Abs(gx.ProbabilityHigh-wantHigh) > 1e-9 {
				t.Errorf("x's group: P %.4f [%.4f, %.4f], want %.4f up to %.4f (w's, of the same class: %.4f)", gx.Probability, gx.ProbabilityLow, gx.ProbabilityHigh, want, wantHigh, gw.Probability)
			}
			for _, m := range r.Matched {
				if (m.Candidate == "x" || m.Candidate == "c") && m.Probability > gx.Probability+1e-12 {
					t.Errorf("%s: P %.4f above its group's %.4f", m.Candidate, m.Probability, gx.Probability)
				}
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "only matches riding in payments by others") })
			if warned != tc.lowered {
				t.Errorf("warned %v, want %v: %q", warned, tc.lowered, r.Warnings)
			}
		})
	}
}
