package leak

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestSharedPayingLowered: wallet a's scripts appear in blocks 10 to 45
// and wallet b's in 100 to 135, and b's scripts p0 to p5 in blocks 50
// to 94, which both sessions fetched (a paid them to b). Where both
// sessions come from one address they are warned of several wallets;
// where the payer's session gives the p scripts less than half and the
// payee's half or more (one-sided, as a payer's blocks carrying its
// payee's scripts leave them), the sessions look like wallets that pay
// each other: every script of both is mapped through sharedCalibrated
// (the contested ones given 0.95 or more too), and each session whose
// scripts were lowered (the payee's) is warned, naming the count. Where both give the
// p scripts half or more (a script of wallets that share a client, as
// package simulate's mixed regime has), where the payee fetched none of
// the p blocks, or where the sessions come from two addresses, nothing
// is changed.
func TestSharedPayingLowered(t *testing.T) {
	entries, aFetch, bFetch, paid := payingFixture()
	withPaid := append(append([]int{}, bFetch...), paid...)
	for _, c := range []struct {
		name   string
		a, b   string
		bFetch []int
		// payerBelow gives the payer's p scripts 0.3, as a payer's
		// session lists its payee's scripts.
		payerBelow bool
		want       bool
	}{
		{"one address, a pays b, one-sided", "127.0.0.2:1000", "127.0.0.2:2000", withPaid, true, true},
		{"one address, both claim the p scripts", "127.0.0.2:1000", "127.0.0.2:2000", withPaid, false, false},
		{"one address, b fetched none of them", "127.0.0.2:1000", "127.0.0.2:2000", bFetch, true, false},
		{"two addresses, a pays b, one-sided", "127.0.0.2:1000", "127.0.0.3:1000", withPaid, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := scanReport(c.a, aFetch, entries), scanReport(c.b, c.bFetch, entries)
			reports := []*Report{a, b}
			warnSharedClients(reports)
			for i := range a.Matched {
				m := &a.Matched[i]
				if !strings.HasPrefix(m.Candidate, "p") {
					continue
				}
				if !c.payerBelow && m.Probability < 0.5 {
					t.Fatalf("payer's %s given %.4f, want half or more for this row", m.Candidate, m.Probability)
				}
				if c.payerBelow {
					if m.Probability >= 0.95 {
						a.Confident--
					}
					m.Probability, m.ProbabilityLow, m.ProbabilityHigh = 0.3, 0.1, 0.5
				}
			}
			shared := contestShared(reports)
			if shared.paying() != c.want {
				t.Fatalf("looks paying %v (%d one-sided of %d contested), want %v", shared.paying(), shared.oneSided, shared.half, c.want)
			}
			before := make([][]Match, len(reports))
			for i, r := range reports {
				before[i] = append([]Match(nil), r.Matched...)
			}
			sharedPaying(reports, shared, false)
			for i, r := range reports {
				lowered := checkMapped(t, r, before[i], func(was *Match) float64 {
					if !c.want {
						return was.Probability
					}
					return sharedMapped(r, was, shared.contested[i][was.Candidate])
				})
				for k, m := range r.Matched {
					if was := before[i][k]; c.want && strings.HasPrefix(m.Candidate, "p") && r == b && was.Probability >= 0.95 && m.Probability >= 0.95 {
						t.Errorf("payee's contested %s kept at %.4f", m.Candidate, m.Probability)
					}
				}
				all := strings.Join(r.Warnings, "\n")
				warned := strings.Contains(all, PayEachOther)
				if warned != (lowered > 0) || (c.want && r == b && lowered == 0) {
					t.Errorf("%s: %d lowered, warned %v: %q", r.Session, lowered, warned, r.Warnings)
				}
				if warned && !strings.Contains(all, fmt.Sprintf("%d of its scripts", lowered)) {
					t.Errorf("%s: warning does not count %d scripts: %q", r.Session, lowered, all)
				}
			}
		})
	}
}

// sharedMapped is what sharedPaying gives was, a match of r, where it
// maps r's scripts: sharedRider for a leading rider given half or more,
// sharedCalibrated for any other.
func sharedMapped(r *Report, was *Match, contested bool) float64 {
	if was.Probability >= 0.5 && r.leadingRider(was) {
		return sharedRider(was.Probability)
	}
	return sharedCalibrated(was.Probability, contested)
}

// checkMapped checks every match of r, each given before[k] before
// sharedPaying, against want of what it was given, its interval around
// it, and r.Confident; it returns how many were lowered.
func checkMapped(t *testing.T, r *Report, before []Match, want func(was *Match) float64) int {
	t.Helper()
	lowered, n := 0, 0
	for k, m := range r.Matched {
		was := &before[k]
		w := want(was)
		if m.Probability != w || m.ProbabilityLow > m.Probability || m.ProbabilityHigh < m.Probability {
			t.Errorf("%s %s: %.4f [%.4f, %.4f] -> %.4f [%.4f, %.4f], want %.4f", r.Session, m.Candidate, was.Probability, was.ProbabilityLow, was.ProbabilityHigh, m.Probability, m.ProbabilityLow, m.ProbabilityHigh, w)
		}
		if m.Probability < was.Probability {
			lowered++
		}
		if m.Probability >= 0.95 {
			n++
		}
	}
	if r.Confident != n {
		t.Errorf("%s: Confident %d, want %d", r.Session, r.Confident, n)
	}
	return lowered
}

// TestSharedPayingRider: in the sessions of TestSharedPayingLowered's
// first row, wallet b's two payments from one outside payer (blocks 140
// and 143, its receive scripts s0 and s1 each beside the payer's change
// r, created in the first and spent in the second) make r a leading
// rider of two appearances, not contested, given (as set) 0.969 or
// more, as the wrong ones under one address were. Where the sessions
// look like wallets that pay each other, r is given sharedRider of what
// it was (its odds times payRider, then the map), never 0.95 or more,
// and b's warning counts it; where they do not (both claim the p
// scripts), r keeps what it was given.
func TestSharedPayingRider(t *testing.T) {
	entries, aFetch, bFetch, paid := payingFixture()
	entries = append(entries,
		universe.IndexEntry{Candidate: "r", Heights: []int32{140, 143}, Txs: oneTx(7, 8)},
		universe.IndexEntry{Candidate: "s0", Heights: []int32{140}, Txs: oneTx(7)},
		universe.IndexEntry{Candidate: "s1", Heights: []int32{143}, Txs: oneTx(8)})
	bFetch = append(append(append([]int{}, bFetch...), paid...), 140, 143)
	for _, c := range []struct {
		name       string
		payerBelow bool
		given      float64 // r's probability before sharedPaying
		lowered    bool
	}{
		{"one-sided, given 0.969", true, 0.969, true},
		{"one-sided, given 0.9999", true, 0.9999, true},
		{"one-sided, given 1", true, 1, true},
		{"both claim the p scripts", false, 0.969, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := scanReport("127.0.0.2:1000", aFetch, entries), scanReport("127.0.0.2:2000", bFetch, entries)
			reports := []*Report{a, b}
			warnSharedClients(reports)
			if c.payerBelow {
				for i := range a.Matched {
					if m := &a.Matched[i]; strings.HasPrefix(m.Candidate, "p") {
						if m.Probability >= 0.95 {
							a.Confident--
						}
						m.Probability, m.ProbabilityLow, m.ProbabilityHigh = 0.3, 0.1, 0.5
					}
				}
			}
			k := slices.IndexFunc(b.Matched, func(m Match) bool { return m.Candidate == "r" })
			if k < 0 {
				t.Fatal("r not matched in b's session")
			}
			r := &b.Matched[k]
			if r.Probability >= 0.95 {
				b.Confident--
			}
			if c.given >= 0.95 {
				b.Confident++
			}
			r.Probability, r.ProbabilityLow, r.ProbabilityHigh = c.given, c.given/2, c.given
			if !b.leadingRider(r) || r.Probability < 0.5 {
				t.Fatalf("r: leading rider %v, given %.4f: want a leading rider given half or more", b.leadingRider(r), r.Probability)
			}
			shared := contestShared(reports)
			if shared.contested[1]["r"] {
				t.Fatal("r contested, want not")
			}
			was := *r
			sharedPaying(reports, shared, false)
			want := was.Probability
			if c.lowered {
				want = sharedRider(was.Probability)
			}
			if r.Probability != want || r.ProbabilityLow > r.Probability || r.ProbabilityHigh < r.Probability {
				t.Errorf("r: %.4f [%.4f, %.4f] -> %.4f [%.4f, %.4f], want %.4f", was.Probability, was.ProbabilityLow, was.ProbabilityHigh, r.Probability, r.ProbabilityLow, r.ProbabilityHigh, want)
			}
			if c.lowered && (r.Probability >= 0.95 || r.ProbabilityHigh >= 0.95) {
				t.Errorf("r given %.4f (interval to %.4f), want below 0.95", r.Probability, r.ProbabilityHigh)
			}
			all := strings.Join(b.Warnings, "\n")
			if named := strings.Contains(all, "1 leading scripts of two appearances"); named != c.lowered {
				t.Errorf("b's warning names the rider %v, want %v: %q", named, c.lowered, all)
			}
			n := 0
			for _, m := range b.Matched {
				if m.Probability >= 0.95 {
					n++
				}
			}
			if b.Confident != n {
				t.Errorf("b: Confident %d, want %d", b.Confident, n)
			}
		})
	}
}

// TestSharedRider: a leading rider's odds are multiplied by payRider
// before the map, so it is given less than a contested script of the
// same probability, and never 0.95 or more.
func TestSharedRider(t *testing.T) {
	for _, p := range []float64{0.5, 0.7, 0.9, 0.95, 0.969, 0.99, 0.9999, 1} {
		got := sharedRider(p)
		if got >= 0.95 || got > sharedCalibrated(p, true) || got > p {
			t.Errorf("sharedRider(%g) = %.4f: want below 0.95, %.4f (contested) and p", p, got, sharedCalibrated(p, true))
		}
	}
	for _, pq := range [][2]float64{{0.5, 0.7}, {0.7, 0.95}, {0.95, 0.99}, {0.99, 1}} {
		if sharedRider(pq[0]) > sharedRider(pq[1]) {
			t.Errorf("sharedRider(%g) = %.4f > sharedRider(%g) = %.4f: want monotone", pq[0], sharedRider(pq[0]), pq[1], sharedRider(pq[1]))
		}
	}
}

// TestKnotCalibrated: the knots' map is linear between them, kept below
// the first, never above p, from the last knot to (1, 1), or flat where
// the last knot's said is 1.
func TestKnotCalibrated(t *testing.T) {
	rising := []payKnot{{0.3, 0.3}, {0.5, 0.4}, {0.9, 0.6}}
	flat := []payKnot{{0.3, 0.3}, {0.9, 0.6}, {1, 0.6}}
	for _, c := range []struct {
		k       []payKnot
		p, want float64
	}{
		{rising, 0.2, 0.2},
		{rising, 0.4, 0.35},
		{rising, 0.7, 0.5},
		{rising, 0.95, 0.8},
		{rising, 1, 1},
		{flat, 0.95, 0.6},
		{flat, 1, 0.6},
		{flat, 0.6, 0.45},
	} {
		if got := knotCalibrated(c.k, c.p); got < c.want-1e-12 || got > c.want+1e-12 {
			t.Errorf("knots %v at %g: %g, want %g", c.k, c.p, got, c.want)
		}
	}
}

// TestSharedManyWallets: wallets w0, w1, ... each have four scripts of
// three appearances in blocks of their own, none paid by another, and
// each session fetches its wallet's blocks (a joint session those of
// every wallet of its address, as a client fetching for all of them at
// once); every session's first script is given 0.9 (as the
// over-confident ones of six wallets behind one address were). Under one
// address every session is warned of several wallets, and none looks
// like wallets that pay each other (no script is listed by two
// sessions). Where a session fetches for other scripts than the
// sessions of four or more other wallets (seven wallets of a session
// each, five or six of two), every script of every session goes through
// sharedCalibrated (the 0.9 ones lowered, those given 0.95 or more
// kept), and each session is warned (ManyWallets), naming the count.
// Where fewer, nothing changes, however many sessions each wallet opens:
// three wallets of two sessions each, of four (eight other sessions, one
// wallet's counted once), of three with a joint session (a session sees
// two other wallets and the joint one: three sets of scripts, as
// package simulate's shared-client regime has), four wallets of two
// sessions each (three others, as many as three wallets and a joint
// session show), or each wallet dialling from an address of its own.
func TestSharedManyWallets(t *testing.T) {
	const perWallet = 4
	for _, c := range []struct {
		name              string
		wallets, sessions int
		joint             bool
		oneAddress        bool
		want              bool
	}{
		{"one address, seven wallets of a session each", 7, 1, false, true, true},
		{"one address, six wallets of two sessions each", 6, 2, false, true, true},
		{"one address, five wallets of two sessions each", 5, 2, false, true, true},
		{"one address, four wallets of two sessions each", 4, 2, false, true, false},
		{"one address, three wallets of two sessions each", 3, 2, false, true, false},
		{"one address, three wallets of four sessions each", 3, 4, false, true, false},
		{"one address, three wallets of three sessions each and a joint one", 3, 3, true, true, false},
		{"one address, two wallets of four sessions each and a joint one", 2, 4, true, true, false},
		{"seven addresses, seven wallets", 7, 1, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var entries []universe.IndexEntry
			fetched := make([][]int, c.wallets)
			var all []int
			for w := range c.wallets {
				for j := range perWallet {
					h := int32(10 + 25*w + 6*j)
					entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("w%d-%d", w, j), Heights: []int32{h, h + 2, h + 4}, Txs: oneTx(1, 1, 1)})
					fetched[w] = append(fetched[w], int(h), int(h)+2, int(h)+4)
				}
				all = append(all, fetched[w]...)
			}
			var reports []*Report
			add := func(client string, fetch []int, w int) {
				r := scanReport(client, fetch, entries)
				k := slices.IndexFunc(r.Matched, func(m Match) bool { return m.Candidate == fmt.Sprintf("w%d-0", w) })
				if k < 0 {
					t.Fatalf("w%d-0 not matched in %s", w, r.Session)
				}
				if m := &r.Matched[k]; m.Probability >= 0.95 {
					r.Confident--
				}
				r.Matched[k].Probability, r.Matched[k].ProbabilityLow, r.Matched[k].ProbabilityHigh = 0.9, 0.8, 0.95
				reports = append(reports, r)
			}
			for w := range c.wallets {
				for s := range c.sessions {
					host := "127.0.0.2"
					if !c.oneAddress {
						host = fmt.Sprintf("127.0.0.%d", 2+w)
					}
					add(fmt.Sprintf("%s:%d", host, 1000+10*w+s), fetched[w], w)
				}
			}
			if c.joint {
				add("127.0.0.2:2000", all, 0)
			}
			warnSharedClients(reports)
			shared := contestShared(reports)
			if shared.paying() {
				t.Fatalf("looks paying (%d one-sided of %d contested), want not", shared.oneSided, shared.half)
			}
			before := make([][]Match, len(reports))
			for i, r := range reports {
				if r.severalWallets != c.oneAddress {
					t.Fatalf("%s: warned of several wallets %v, want %v", r.Session, r.severalWallets, c.oneAddress)
				}
				before[i] = slices.Clone(r.Matched)
			}
			sharedPaying(reports, shared, false)
			for i, r := range reports {
				lowered := checkMapped(t, r, before[i], func(was *Match) float64 {
					if !c.want {
						return was.Probability
					}
					return sharedMapped(r, was, false)
				})
				if c.want && lowered == 0 {
					t.Errorf("%s: nothing lowered, want its script given 0.9 lowered", r.Session)
				}
				all := strings.Join(r.Warnings, "\n")
				warned := strings.Contains(all, ManyWallets)
				if warned != (lowered > 0) || strings.Contains(all, PayEachOther) {
					t.Errorf("%s: %d lowered, warned %v: %q", r.Session, lowered, warned, r.Warnings)
				}
				if warned && !strings.Contains(all, fmt.Sprintf("%d of its scripts", lowered)) {
					t.Errorf("%s: warning does not count %d scripts: %q", r.Session, lowered, all)
				}
				if warned && !strings.Contains(all, fmt.Sprintf("the sessions of %d other wallets", c.wallets-1)) {
					t.Errorf("%s: warning does not count %d other wallets: %q", r.Session, c.wallets-1, all)
				}
				if warned && !strings.Contains(all, fmt.Sprintf("the sessions of %d other wallets", c.wallets-1)) {
					t.Errorf("%s: warning does not count %d other wallets: %q", r.Session, c.wallets-1, all)
				}
			}
		})
	}
}

// TestOtherWallets: the sessions apart from session 0 are counted once
// for each set of sessions that do not fetch for other scripts than each
// other (one wallet's), in order: a wallet's second session is not
// counted beside its first however far from 0 it is, a session apart
// from everything counted is, and sessions not apart from 0 never are.
func TestOtherWallets(t *testing.T) {
	for _, c := range []struct {
		name  string
		apart [][2]int // the pairs that fetch for other scripts
		n     int      // sessions, 0 the one counting
		want  int
	}{
		{"none apart", nil, 3, 0},
		{"two sessions of one wallet", [][2]int{{0, 1}, {0, 2}}, 3, 1},
		{"two wallets", [][2]int{{0, 1}, {0, 2}, {1, 2}}, 3, 2},
		{"two wallets of two sessions each", [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 3}, {1, 4}, {2, 3}, {2, 4}}, 5, 2},
		{"own wallet's other session not counted", [][2]int{{0, 2}, {1, 2}}, 3, 1},
		{"three wallets and a joint session", [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}, 4, 3},
	} {
		apart := map[[2]int]bool{}
		for _, p := range c.apart {
			apart[p] = true
		}
		host := make([]int, c.n)
		for i := range host {
			host[i] = i
		}
		got := otherWallets(0, host, func(i, j int) bool { return apart[[2]int{min(i, j), max(i, j)}] })
		if got != c.want {
			t.Errorf("%s: %d other wallets, want %d", c.name, got, c.want)
		}
	}
}
