package leak

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// unitPOf is the probability r gives the unit of candidate c (-1: not
// listed).
func unitPOf(r *Report, c string) float64 {
	for k := range r.Matched {
		if r.Matched[k].Candidate == c {
			return r.unitP(r.unitOf(k))
		}
	}
	return -1
}

// TestCoFetched: w (10, 20, 30, 40) is fetched by both sessions, x (100,
// 120, 140) by the first only. Where the sessions come from two
// addresses and fetch for different scripts (the second scanned x's
// blocks and left them), the two claims on w are exclusive: each is
// divided by their sum, so that they add up to 1, and x, whose blocks
// only the first fetched, keeps its probability. Sessions that fetch the
// same blocks (one wallet's, from two addresses) or come from one
// address are left alone.
func TestCoFetched(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "x", Heights: []int32{100, 120, 140}, Txs: oneTx(2, 2, 2)},
	}
	both, wOnly := []int{10, 20, 30, 40, 100, 120, 140}, []int{10, 20, 30, 40, 77}
	for _, c := range []struct {
		name           string
		a, b           string
		aFetch, bFetch []int
		divided        bool
	}{
		{"two addresses, different scripts", "127.0.0.1:1000", "127.0.0.2:1000", both, wOnly, true},
		{"two addresses, one wallet's blocks", "127.0.0.1:1000", "127.0.0.2:1000", both, both, false},
		{"one address, different scripts", "127.0.0.1:1000", "127.0.0.1:2000", both, wOnly, false},
	} {
		a, b := scanReport(c.a, c.aFetch, entries), scanReport(c.b, c.bFetch, entries)
		aw, bw, ax := unitPOf(a, "w"), unitPOf(b, "w"), unitPOf(a, "x")
		if aw+bw <= 1 || ax < 0.5 {
			t.Fatalf("%s: w given %g and %g, x %g: want claims on w that add up to more than 1 and x claimed", c.name, aw, bw, ax)
		}
		coFetched([]*Report{a, b})
		gotA, gotB, gotX := unitPOf(a, "w"), unitPOf(b, "w"), unitPOf(a, "x")
		if gotX != ax {
			t.Errorf("%s: x went from %g to %g, want it kept", c.name, ax, gotX)
		}
		warned := strings.Contains(strings.Join(a.Warnings, "\n"), "(co-fetched)")
		if !c.divided {
			if gotA != aw || gotB != bw || warned {
				t.Errorf("%s: w went from %g and %g to %g and %g (warned %v), want both kept", c.name, aw, bw, gotA, gotB, warned)
			}
			continue
		}
		sum := aw + bw
		if d := gotA - aw/sum; d > 1e-12 || d < -1e-12 || gotB-bw/sum > 1e-12 || gotB-bw/sum < -1e-12 || !warned {
			t.Errorf("%s: w went from %g and %g to %g and %g (warned %v), want %g and %g", c.name, aw, bw, gotA, gotB, warned, aw/sum, bw/sum)
		}
		for _, m := range a.Matched {
			if m.Candidate == "w" && (m.ProbabilityLow > m.Probability || m.ProbabilityHigh < m.Probability) {
				t.Errorf("%s: w's interval [%g, %g] leaves its probability %g", c.name, m.ProbabilityLow, m.ProbabilityHigh, m.Probability)
			}
		}
	}
}

// TestCoFetchedBoundSaid: a capture whose comparisons the bound stops is
// warned that its claims may still count other clients' scripts, and
// a bound it stays within warns nothing of it.
func TestCoFetchedBoundSaid(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "x", Heights: []int32{100, 120, 140}, Txs: oneTx(2, 2, 2)},
	}
	for _, c := range []struct {
		bound int
		said  bool
	}{{0, true}, {maxCoFetchWork, false}} {
		a := scanReport("127.0.0.1:1000", []int{10, 20, 30, 40, 100, 120, 140}, entries)
		b := scanReport("127.0.0.2:1000", []int{10, 20, 30, 40, 77}, entries)
		coFetchedWithin([]*Report{a, b}, c.bound)
		for _, r := range []*Report{a, b} {
			if said := strings.Contains(strings.Join(r.Warnings, "\n"), "too many to compare"); said != c.said {
				t.Errorf("bound %d: %s warned of the bound %v, want %v (warnings %q)", c.bound, r.Client, said, c.said, r.Warnings)
			}
		}
	}
}

// TestCoFetchedGroupClaims: on blocks where every wallet is paid (a
// round's payments in one block), a group's members share its
// probability and each is given less than half, so that only the group
// claims anything. The two sessions, from two addresses, fetch w's
// group's blocks (10 to 40) and only the first x's (100 to 140): the
// second scanned x's group and left it, so the two fetch for different
// scripts, and their claims on w's group, 0.9 each, are divided by their
// sum. Sessions that fetch the same blocks (one wallet's) are left
// alone.
func TestCoFetchedGroupClaims(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "wc", Heights: []int32{10, 20}, Txs: oneTx(1, 1)},
		{Candidate: "x", Heights: []int32{100, 120, 140}, Txs: oneTx(2, 2, 2)},
		{Candidate: "xc", Heights: []int32{100, 120}, Txs: oneTx(2, 2)},
	}
	both, wOnly := []int{10, 20, 30, 40, 100, 120, 140}, []int{10, 20, 30, 40, 77}
	for _, c := range []struct {
		name    string
		bFetch  []int
		divided bool
	}{
		{"different scripts", wOnly, true},
		{"one wallet's blocks", both, false},
	} {
		a, b := scanReport("127.0.0.1:1000", both, entries), scanReport("127.0.0.2:1000", c.bFetch, entries)
		for _, r := range []*Report{a, b} {
			for k := range r.Matched {
				r.Matched[k].Probability = 0.4
			}
			for gi := range r.Groups {
				g := &r.Groups[gi]
				g.Probability, g.ProbabilityLow, g.ProbabilityHigh = 0.9, 0.8, 0.95
			}
		}
		if unitPOf(a, "w") != 0.9 || unitPOf(a, "x") != 0.9 || unitPOf(b, "w") != 0.9 || a.Matched[0].Group == 0 {
			t.Fatalf("%s: w given %g and %g, x %g: want them grouped", c.name, unitPOf(a, "w"), unitPOf(b, "w"), unitPOf(a, "x"))
		}
		coFetched([]*Report{a, b})
		want := 0.9
		if c.divided {
			want = 0.5
		}
		for _, r := range []*Report{a, b} {
			if got := unitPOf(r, "w"); got-want > 1e-12 || want-got > 1e-12 {
				t.Errorf("%s: %s gives w's group %g, want %g", c.name, r.Client, got, want)
			}
		}
		if got := unitPOf(a, "x"); got != 0.9 {
			t.Errorf("%s: x's group went from 0.9 to %g, want it kept", c.name, got)
		}
	}
}

// TestCoFetchedSameEveryRun: a claim shared with sessions of eight other
// addresses, each giving it a different probability (each fetched a
// different number of decoys), is divided by the same sum, to the last
// bit, however often the capture is read: the weights are added in one
// order, not in the order a map gives them.
func TestCoFetchedSameEveryRun(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "x", Heights: []int32{100, 120, 140}, Txs: oneTx(2, 2, 2)},
	}
	read := func() float64 {
		reports := []*Report{scanReport("127.0.0.1:1000", []int{10, 20, 30, 40, 100, 120, 140}, entries)}
		for i := range 8 {
			fetch := []int{10, 20, 30, 40}
			for d := range 3 * (i + 1) {
				fetch = append(fetch, 150+d)
			}
			reports = append(reports, scanReport(fmt.Sprintf("127.0.0.%d:1000", i+2), fetch, entries))
		}
		coFetched(reports)
		return unitPOf(reports[0], "w")
	}
	first := read()
	for run := range 40 {
		if got := read(); math.Float64bits(got) != math.Float64bits(first) {
			t.Fatalf("run %d: w given %v, first run %v: want the same to the last bit", run+1, got, first)
		}
	}
}
