package leak

import (
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestSeveralWalletsWarned: two sessions from one address, one fetching
// the blocks of w (10, 20, 30, 40) and x (100, 120), the other only w's,
// fetch for different scripts: both are warned, each of one other
// session, in words that fold across sessions. Sessions that
// fetch the same blocks, or come from different addresses, are not.
func TestSeveralWalletsWarned(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "x", Heights: []int32{100, 120}, Txs: oneTx(2, 2)},
	}
	both, wOnly := []int{10, 20, 30, 40, 100, 120}, []int{10, 20, 30, 40, 77}
	for _, c := range []struct {
		name           string
		a, b           string
		aFetch, bFetch []int
		want           bool
	}{
		{"one address, different scripts", "127.0.0.1:1000", "127.0.0.1:2000", both, wOnly, true},
		{"one address, one wallet's", "[::1]:1000", "[::1]:2000", both, both, false},
		{"two addresses", "127.0.0.1:1000", "127.0.0.2:1000", both, wOnly, false},
	} {
		a, b := scanReport(c.a, c.aFetch, entries), scanReport(c.b, c.bFetch, entries)
		warnSharedClients([]*Report{a, b})
		for _, r := range []*Report{a, b} {
			all := strings.Join(r.Warnings, "\n")
			if got := strings.Contains(all, SeveralWallets); got != c.want {
				t.Errorf("%s: session %s warned %v, want %v: %q", c.name, r.Session, got, c.want, r.Warnings)
			} else if got && !strings.Contains(all, "1 other session "+SeveralWallets) {
				t.Errorf("%s: session %s's warning does not count the other session: %q", c.name, r.Session, all)
			}
		}
	}
}

// TestSkippedMost: a session that scanned 0 to 199 and fetched only w's
// blocks (10 to 40) did not fetch most of another session's claims only
// where more than half of those it scanned are not w: one claim of
// decoys or chance beside a wallet's two is not enough, two beside one
// is, and claims beyond its scan are not counted.
func TestSkippedMost(t *testing.T) {
	r := scanReport("127.0.0.1:1000", []int{10, 20, 30, 40}, nil)
	claim := func(hs ...int32) *Match { return &Match{Heights: hs} }
	w1, w2 := claim(10, 20), claim(30, 40)
	x, y := claim(50, 60), claim(70, 80)
	beyond := claim(150, 250)
	for _, c := range []struct {
		name   string
		claims []*Match
		want   bool
	}{
		{"the wallet's own", []*Match{w1, w2}, false},
		{"one of three another's", []*Match{w1, w2, x}, false},
		{"two of three another's", []*Match{w1, x, y}, true},
		{"one of two another's", []*Match{w1, x}, false},
		{"another's beside one beyond the scan", []*Match{x, beyond}, true},
		{"none scanned", []*Match{beyond}, false},
	} {
		if got := r.skippedMost(c.claims); got != c.want {
			t.Errorf("%s: skippedMost %v, want %v", c.name, got, c.want)
		}
		if got, want := r.skipped(c.claims), c.name != "the wallet's own" && c.name != "none scanned"; got != want {
			t.Errorf("%s: skipped %v, want %v", c.name, got, want)
		}
	}
}

// TestSessionPairsBound: two sessions of one address that fetch for
// different scripts are apart within the bound; a bound already spent
// refuses a pair not yet compared (not apart, nothing spent), unless the
// caller checks the bound itself (coFetch.sum), and then every pair asked
// for is compared.
func TestSessionPairsBound(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)},
		{Candidate: "x", Heights: []int32{100, 120}, Txs: oneTx(2, 2)},
	}
	for _, c := range []struct {
		name         string
		bound        int
		callerChecks bool
		apart        bool
		spent        bool
	}{
		{"within the bound", maxSharedWork, false, true, true},
		{"bound spent", 0, false, false, false},
		{"bound spent, the caller's to check", 0, true, true, true},
	} {
		a := scanReport("127.0.0.1:1000", []int{10, 20, 30, 40, 100, 120}, entries)
		b := scanReport("127.0.0.1:2000", []int{10, 20, 30, 40, 77}, entries)
		p := &sessionPairs{reports: []*Report{a, b}, claims: [][]*Match{a.claimed(), b.claimed()}, bound: c.bound, callerChecks: c.callerChecks}
		if got := p.apart(0, 1); got != c.apart {
			t.Errorf("%s: apart %v, want %v", c.name, got, c.apart)
		}
		if spent := p.work > 0; spent != c.spent {
			t.Errorf("%s: %d steps spent, want some %v", c.name, p.work, c.spent)
		}
		if got := p.apart(1, 0); got != c.apart {
			t.Errorf("%s: apart of the pair asked again %v, want %v", c.name, got, c.apart)
		}
	}
}
