package neutrinocapture

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// A client's own leak report (leak.Compute over its ledger) is held to
// the attack run on the capture of the same scan (attack.AnalyzeFetches
// on what the relays saw, "privacy fetches"): per peer, and all peers
// colluding, the watched scripts the attack attributes at P >= 0.95 and
// at P >= 0.5 and its highest posterior of a watched script. Compute
// documents its report as conservative: what it could not test is taken
// to appear where it was not seen, which only raises the probabilities.
// Its null differs too: the labelled one (a class's groups that hold no
// own script), where the attacker on a capture has the shifts of the
// fetched set. The report may therefore say more than the attacker
// concludes, never less: each count of the report at least the
// attack's, its highest posterior at least the attack's less
// agreeSlack. How much more it says is logged, script by script. The
// blocks it says each peer was asked for must be those the relay saw.

// agreeSlack is how far below the attack's highest posterior the
// client's may lie: the rounding of two computations of one share.
const agreeSlack = 1e-9

// viewFigures are what one view (a peer, or the peers colluding) gives
// away of the watched scripts, by the client's report or the attack.
type viewFigures struct {
	confident, likely int
	highest           float64
	// p is the posterior of each watched script (by its index in the
	// watch list) that the view matched.
	p map[int]float64
	// inGroup counts the watched scripts whose group (or the script
	// alone) is at P >= 0.95 (one member of it, not each, is the
	// wallet's), and groupHighest is the highest such P.
	inGroup      int
	groupHighest float64
}

// String prints the figures as the table does.
func (f viewFigures) String() string {
	return fmt.Sprintf("%d / %d / %.3f", f.confident, f.likely, f.highest)
}

// reportFigures reads a view of the client's report.
func reportFigures(pl *leak.PeerLeak) viewFigures {
	f := viewFigures{confident: pl.Confident, likely: pl.Likely, p: map[int]float64{}}
	if pl.Highest != nil {
		f.highest = *pl.Highest
	}
	group := map[int]float64{}
	for _, s := range pl.Scripts {
		f.p[s.WatchItem] = max(f.p[s.WatchItem], s.Probability)
		group[s.WatchItem] = max(group[s.WatchItem], s.GroupProbability)
	}
	f.inGroup, f.groupHighest = countGroups(group)
	return f
}

// countGroups returns how many of the watched scripts' group
// probabilities are at least 0.95, and the highest.
func countGroups(group map[int]float64) (n int, highest float64) {
	for _, g := range group {
		if g >= 0.95 {
			n++
		}
		highest = max(highest, g)
	}
	return n, highest
}

// attackFigures reads the attack's report of a view for the watched
// scripts, named as the index names them (their addresses), each at
// its match's probability, as Compute reports it.
func attackFigures(r *attack.FetchReport, watched []string) viewFigures {
	f := viewFigures{p: map[int]float64{}}
	group := map[int]float64{}
	for _, m := range r.Matched {
		i := slices.Index(watched, m.Candidate)
		if i < 0 {
			continue
		}
		f.p[i] = max(f.p[i], m.Probability)
		g := m.Probability
		if m.Group > 0 {
			g = r.Groups[m.Group-1].Probability
		}
		group[i] = max(group[i], g)
	}
	f.inGroup, f.groupHighest = countGroups(group)
	for _, p := range f.p {
		if p >= 0.95 {
			f.confident++
		}
		if p >= 0.5 {
			f.likely++
		}
		f.highest = max(f.highest, p)
	}
	return f
}

// underReports returns how the client's figures fall short of the
// attack's (none when they agree: each at least the attack's), naming
// the view.
func underReports(view string, client, att viewFigures) []string {
	var out []string
	if client.confident < att.confident {
		out = append(out, fmt.Sprintf("%s: the report attributes %d watched scripts at P >= 0.95, the attack on the capture %d", view, client.confident, att.confident))
	}
	if client.likely < att.likely {
		out = append(out, fmt.Sprintf("%s: the report attributes %d watched scripts at P >= 0.5, the attack on the capture %d", view, client.likely, att.likely))
	}
	if client.highest < att.highest-agreeSlack {
		out = append(out, fmt.Sprintf("%s: the report's highest posterior is %.4f, the attack's %.4f", view, client.highest, att.highest))
	}
	if client.inGroup < att.inGroup {
		out = append(out, fmt.Sprintf("%s: the report puts %d watched scripts in groups of P >= 0.95, the attack on the capture %d", view, client.inGroup, att.inGroup))
	}
	if client.groupHighest < att.groupHighest-agreeSlack {
		out = append(out, fmt.Sprintf("%s: the report's highest group posterior is %.4f, the attack's %.4f", view, client.groupHighest, att.groupHighest))
	}
	return out
}

// sameBlocks returns how the blocks the report says a view scanned and
// fetched differ from those its capture shows: the ledger must record
// what the relay saw. With wider, the report may say more blocks were
// scanned: Compute takes a peer asked for no filter range to have
// scanned every block before it joins the peers, where the attack on
// the captures joins only the ranges asked for, and a wider range with
// the same blocks fetched only raises the probabilities.
func sameBlocks(view string, pl *leak.PeerLeak, r *attack.FetchReport, wider bool) []string {
	scanned := pl.BlocksScanned == r.ScannedBlocks || wider && pl.BlocksScanned > r.ScannedBlocks
	if scanned && slices.Equal(pl.FetchedHeights, r.FetchedHeights) {
		return nil
	}
	return []string{fmt.Sprintf("%s: the report says B = %d, fetched %v; the capture B = %d, fetched %v",
		view, pl.BlocksScanned, pl.FetchedHeights, r.ScannedBlocks, r.FetchedHeights)}
}

// agreeRow is one view's figures, the report's beside the attack's.
type agreeRow struct {
	scan, view     string
	client, attack viewFigures
}

// scriptGaps describes the watched scripts whose posteriors differ by
// more than agreeSlack, the report's against the attack's.
func (a agreeRow) scriptGaps() string {
	items := slices.Collect(maps.Keys(a.client.p))
	for i := range a.attack.p {
		if _, ok := a.client.p[i]; !ok {
			items = append(items, i)
		}
	}
	slices.Sort(items)
	var b strings.Builder
	for _, i := range items {
		if c, p := a.client.p[i], a.attack.p[i]; math.Abs(c-p) > agreeSlack {
			fmt.Fprintf(&b, " #%d %.3f/%.3f", i, c, p)
		}
	}
	return strings.TrimSpace(b.String())
}

// relayCapture is what one relay saw: its address, its capture and the
// fetch sessions in it.
type relayCapture struct {
	addr     string
	raw      []byte
	sessions []*capture.FetchSession
}

// throughRelays runs run with the addresses of n privacy/capture relays
// in front of node, one capture each.
func throughRelays(ctx context.Context, t *testing.T, node *peertest.Node, n int, run func(addrs []string)) []relayCapture {
	t.Helper()
	if n == 1 {
		var addr string
		raw, sessions := throughRelay(ctx, t, node, func(a string) {
			addr = a
			run([]string{a})
		})
		return []relayCapture{{addr, raw, sessions}}
	}
	var out []relayCapture
	var nest func(addrs []string)
	nest = func(addrs []string) {
		if len(addrs) == n {
			run(addrs)
			return
		}
		var addr string
		raw, sessions := throughRelay(ctx, t, node, func(a string) {
			addr = a
			nest(append(slices.Clone(addrs), a))
		})
		out = append(out, relayCapture{addr, raw, sessions})
	}
	nest(nil)
	slices.Reverse(out) // the innermost relay returned first
	return out
}

// colluding runs the attack on sessions as one view, the union of what
// they saw ("privacy fetches --collude", with --cover-target target when
// it is not 0): the last report.
func colluding(t *testing.T, sessions []*capture.FetchSession, index []byte, target float64) *attack.FetchReport {
	t.Helper()
	ir, err := universe.NewIndexReader(bytes.NewReader(index))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{Collude: true, CoverTarget: target})
	if err != nil {
		t.Fatal(err)
	}
	return reps[len(reps)-1]
}

// agreement compares the client's report l of a scan with the attack on
// the relays' captures, per relay (each relay's sessions joined: one
// peer address) and all colluding, and returns the rows and every way
// the report falls short or its blocks differ from the capture's. With
// a target (a covered client's report is the cover-aware attack), the
// attack is told it too.
func agreement(t *testing.T, scan string, l *leak.Leak, relays []relayCapture, index []byte, watched []string, target float64) ([]agreeRow, []string) {
	t.Helper()
	var rows []agreeRow
	var short []string
	var all []*capture.FetchSession
	for i, rc := range relays {
		all = append(all, rc.sessions...)
		view := fmt.Sprintf("peer %d", i+1)
		var pl *leak.PeerLeak
		for j := range l.Peers {
			if a := l.Peers[j].Address; a != nil && *a == rc.addr {
				pl = &l.Peers[j]
			}
		}
		if len(rc.sessions) == 0 {
			if pl != nil && pl.BlocksFetched > 0 {
				short = append(short, fmt.Sprintf("%s: the report says %s was asked for %d blocks, its relay saw no scan", view, rc.addr, pl.BlocksFetched))
			}
			continue
		}
		if pl == nil {
			short = append(short, fmt.Sprintf("%s: the relay at %s saw a scan the report does not list", view, rc.addr))
			continue
		}
		r := colluding(t, rc.sessions, index, target)
		t.Logf("%s: %s at %s: the report says B = %d, F = %d (%v); the capture B = %d, F = %d (%v) from %v to %v",
			scan, view, rc.addr, pl.BlocksScanned, pl.BlocksFetched, pl.FetchedHeights, r.ScannedBlocks, r.FetchedBlocks, r.FetchedHeights, fmtp(r.ScannedFrom), fmtp(r.ScannedTo))
		short = append(short, sameBlocks(view, pl, r, false)...)
		t.Logf("%s: %s: chance groups by class, the report's / the shifts': %s", scan, view, chanceByClass(pl, r))
		rows = append(rows, agreeRow{scan, view, reportFigures(pl), attackFigures(r, watched)})
	}
	if len(all) > 0 {
		r := colluding(t, all, index, target)
		short = append(short, sameBlocks("colluding", &l.Collusion, r, true)...)
		if l.Collusion.BlocksScanned != r.ScannedBlocks {
			t.Logf("%s, colluding: the report says B = %d, the attack on the captures %d", scan, l.Collusion.BlocksScanned, r.ScannedBlocks)
		}
		t.Logf("%s: colluding: chance groups by class, the report's / the shifts': %s", scan, chanceByClass(&l.Collusion, r))
		rows = append(rows, agreeRow{scan, "colluding", reportFigures(&l.Collusion), attackFigures(r, watched)})
	}
	for _, r := range rows {
		short = append(short, underReports(r.view, r.client, r.attack)...)
	}
	return rows, short
}

// chanceByClass prints, per class of two or more appearances that
// either gives, the chance groups of the client's report (its labelled
// count, PeerLeak.ChanceGroups) beside the attack's (the shifts' mean),
// classes of leak.MaxProfileClass or more appearances joined.
func chanceByClass(pl *leak.PeerLeak, r *attack.FetchReport) string {
	shifts := map[int]float64{}
	for _, c := range r.ByAppearances {
		shifts[int(min(c.Appearances, leak.MaxProfileClass))] += c.ExpectedGroupsByShifts
	}
	var b strings.Builder
	for k := 2; k <= leak.MaxProfileClass; k++ {
		if pl.ChanceGroups[k] > 0 || shifts[k] > 0 {
			fmt.Fprintf(&b, " k=%d %.1f/%.1f", k, pl.ChanceGroups[k], shifts[k])
		}
	}
	return strings.TrimSpace(b.String())
}

// agreeTable is the rows in the form of privacy/README.md's tables.
func agreeTable(rows []agreeRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| scan | view | report: P>=0.95 / P>=0.5 / highest | attack on capture: P>=0.95 / P>=0.5 / highest | report - attack | by group, report / attack: scripts in one of P>=0.95, highest | scripts that differ (#item report/attack) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %v | %v | %+d / %+d / %+.3f | %d, %.3f / %d, %.3f | %s |\n", r.scan, r.view, r.client, r.attack,
			r.client.confident-r.attack.confident, r.client.likely-r.attack.likely, r.client.highest-r.attack.highest,
			r.client.inGroup, r.client.groupHighest, r.attack.inGroup, r.attack.groupHighest, r.scriptGaps())
	}
	return b.String()
}

// TestUnderReportCaught shows the agreement check can fail: a report
// that says less than the attack, by a count or by its highest
// posterior, is named; one that says as much or more is not.
func TestUnderReportCaught(t *testing.T) {
	att := viewFigures{confident: 3, likely: 5, highest: 0.99, inGroup: 6, groupHighest: 1}
	cases := []struct {
		name   string
		client viewFigures
		short  int
	}{
		{"the same", att, 0},
		{"more (conservative)", viewFigures{confident: 4, likely: 6, highest: 1, inGroup: 7, groupHighest: 1}, 0},
		{"one fewer at 0.95", viewFigures{confident: 2, likely: 5, highest: 0.99, inGroup: 6, groupHighest: 1}, 1},
		{"one fewer at 0.5", viewFigures{confident: 3, likely: 4, highest: 0.99, inGroup: 6, groupHighest: 1}, 1},
		{"a lower highest", viewFigures{confident: 3, likely: 5, highest: 0.97, inGroup: 6, groupHighest: 1}, 1},
		{"fewer in groups", viewFigures{confident: 3, likely: 5, highest: 0.99, inGroup: 3, groupHighest: 1}, 1},
		{"a lower group highest", viewFigures{confident: 3, likely: 5, highest: 0.99, inGroup: 6, groupHighest: 0.9}, 1},
		{"nothing", viewFigures{}, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := underReports("peer 1", c.client, att); len(got) != c.short {
				t.Errorf("%d shortfalls %q, want %d", len(got), got, c.short)
			}
		})
	}
}

// TestBlocksMismatchCaught shows the check of the ledger against the
// capture can fail: a report that leaves out a fetched block, or says a
// peer scanned fewer blocks than its relay saw, is named; a wider
// scanned range is allowed only for the peers colluding.
func TestBlocksMismatchCaught(t *testing.T) {
	att := &attack.FetchReport{ScannedBlocks: 300, FetchedHeights: []int32{153, 165}}
	cases := []struct {
		name    string
		scanned uint64
		fetched []int32
		wider   bool
		short   int
	}{
		{"the same", 300, []int32{153, 165}, false, 0},
		{"a block left out", 300, []int32{153}, false, 1},
		{"fewer scanned", 299, []int32{153, 165}, true, 1},
		{"more scanned, one peer", 451, []int32{153, 165}, false, 1},
		{"more scanned, colluding", 451, []int32{153, 165}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := &leak.PeerLeak{BlocksScanned: c.scanned, FetchedHeights: c.fetched}
			if got := sameBlocks("peer 1", pl, att, c.wider); len(got) != c.short {
				t.Errorf("%d mismatches %q, want %d", len(got), got, c.short)
			}
		})
	}
}

// fmtp prints a height that may be absent.
func fmtp(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}
