package simulate_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// claimBin is the claims of one probability bin: how many, how many
// right, and the sum of their probabilities.
type claimBin struct {
	n, right int
	sumP     float64
}

func (b claimBin) String() string {
	if b.n == 0 {
		return "-"
	}
	lo, hi := simulate.Wilson(b.right, b.n)
	return fmt.Sprintf("said %.3f, right %d of %d (%.3f) [%.3f, %.3f]", b.sumP/float64(b.n), b.right, b.n, float64(b.right)/float64(b.n), lo, hi)
}

// underClaimed reports whether the bin's claims are right measurably more
// often than they say.
func (b claimBin) underClaimed() bool {
	if b.n == 0 {
		return false
	}
	lo, _ := simulate.Wilson(b.right, b.n)
	return lo > b.sumP/float64(b.n)
}

// intersectWallets runs fetches --intersect --cover-target t over each
// wallet's sessions of a covered scenario (60 wallets, two sessions
// each) and bins the intersection's groups of P >= 0.5: right when a
// member is the wallet's.
func intersectWallets(t *testing.T, fresh bool, target float64) claimBin {
	t.Helper()
	o, err := simulate.RegimeOptions(simulate.RegimeCovered)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed, o.Wallets, o.Noise, o.Degenerate = coveredSeed+1, 0, 0, 0
	o.Chain = simulate.ChainOptions{Blocks: 600, TxsPerBlock: 30}
	o.Fetch.Wallets, o.Fetch.Sessions, o.Fetch.Noise = 60, simulate.IntRange{Min: 2, Max: 2}, 0
	o.Fetch.CoverTarget, o.Fetch.FreshCovers = target, fresh
	sc, fcapt, index := generateFetch(t, o)
	recs, err := capture.Read(fcapt)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	byWallet := map[string][]*capture.FetchSession{}
	ofSession := map[string]string{}
	for _, s := range sc.Labels.Fetch.Sessions {
		ofSession[s.ID] = s.Wallet
	}
	for _, s := range sessions {
		byWallet[ofSession[s.ID]] = append(byWallet[ofSession[s.ID]], s)
	}
	var bin claimBin
	for _, w := range sc.Labels.Fetch.Wallets {
		own := map[string]bool{}
		for _, s := range w.Scripts {
			own[s] = true
		}
		ir, err := universe.NewIndexReader(bytes.NewReader(index.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		reps, err := attack.AnalyzeFetches(byWallet[w.ID], ir, attack.FetchOptions{Intersect: true, CoverTarget: target})
		if err != nil {
			t.Fatal(err)
		}
		joint := reps[len(reps)-1]
		for _, g := range joint.Groups {
			if g.Probability < 0.5 {
				continue
			}
			right := false
			for _, m := range g.Members {
				right = right || own[m]
			}
			bin.n++
			bin.sumP += g.Probability
			if right {
				bin.right++
			}
		}
	}
	return bin
}

// TestCoverIntersect intersects the two sessions of each covered client
// (fetches --intersect --cover-target 0.5): the covers persist across
// sessions, so the intersection keeps them, and its groups given P >=
// 0.5 are right no more often than they say (Wilson). The negative
// control, clients that draw a fresh cover set each session (as one that
// lost its cover file), must be right measurably more often: there the
// intersection strips the covers and the cap hides what it learned.
func TestCoverIntersect(t *testing.T) {
	const target = 0.5
	kept := intersectWallets(t, false, target)
	fresh := intersectWallets(t, true, target)
	t.Logf("intersection of two sessions, groups given P >= 0.5: covers kept: %v; fresh covers each session: %v", kept, fresh)
	if kept.n == 0 {
		t.Fatal("no group given P >= 0.5 in any intersection")
	}
	if kept.underClaimed() {
		t.Errorf("covers kept across sessions: the intersection's groups at the target are right more often than said: %v", kept)
	}
	if !fresh.underClaimed() {
		t.Errorf("negative control: fresh covers each session, yet the intersection does not find the wallet more often than the cap says: %v", fresh)
	}
}
