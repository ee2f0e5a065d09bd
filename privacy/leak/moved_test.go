package leak_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// simulatedFetches is a small simulated chain of the regime's, its index
// and the fetch sessions of its BIP 157 wallets.
func simulatedFetches(t testing.TB, r simulate.Regime, seed uint64) (*simulate.Scenario, []*capture.FetchSession, []byte) {
	t.Helper()
	o, err := simulate.RegimeOptions(r)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed, o.Wallets = seed, 6
	o.Addresses.Max = min(o.Addresses.Max, 500)
	o.Chain = simulate.ChainOptions{Blocks: 300, TxsPerBlock: 20}
	o.Fetch.Wallets = 6
	sc, err := simulate.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	var index, fcapt bytes.Buffer
	if err := sc.WriteIndex(&index); err != nil {
		t.Fatal(err)
	}
	if err := sc.WriteFetchCapture(&fcapt); err != nil {
		t.Fatal(err)
	}
	recs, err := capture.Read(&fcapt)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	return sc, sessions, index.Bytes()
}

// TestAnalyzeMovedUnchanged: the reports of the block-download attack on
// simulated captures, as privacy fetches --json prints them, are the
// bytes they were before the attack moved from package attack to package
// leak (the hashes were taken with the code before the move, at the same
// seeds). A change meant to alter the reports updates them, saying why:
// they were updated when reports gained the warning that covers cannot be
// ruled out, and scripts in batched transactions and groups nested in
// another's blocks their lower probabilities, and when that warning came
// to be given from a claim of 0.5 on, and when pooled groups came to have
// half their class's probability and each of an ambiguous set its share,
// and when the shifts came to count the scripts seen once in their
// matches' transactions (a match rides beside them, as in the report)
// and groups of more than 64 members came to be counted also against
// the shifts' groups of their size, and when a member chained through
// the others' transactions (riding in every one of two or more blocks,
// not the most appearing) came to have three tenths of its group's
// probability, a pooled group of a session of several wallets its
// class's, and a match escorted by matches with evidence of their own
// three quarters of its probability, and when a member riding in
// transactions of two matches whose counterparty spent a script of them
// elsewhere came to be settled (Match.Settled), and one in transactions
// spending coins no match holds, or holding four matches, paid
// (Match.Paid), and when the null came to leave out the wallet's share
// of the shifts' groups the fetched set matches too (self hits), and
// when a class's chance count came to be no lower than the null can
// resolve (resolution), and when the members of as many appearances as
// the most appearing one came to be ambiguous only with those they share
// a block with, and such a member riding alone so, outside transactions
// of two, its group's probability, and when a settled member chained
// through the others' transactions came to have 0.7 of its group's, and
// when a session's interval on its wallet's groups came to be taken
// from its chance count given that it is no more than the groups
// observed (observedCount), and when that count's range came to leave
// 1.5% of its law above it and 3.5% below (chanceAboveTail), and when a
// group whose members beside its most appearing one are all paid came to
// have a tenth of its class's probability (paidOnly), and when a match
// alone of two or more appearances came to have its odds multiplied by
// AloneOdds (lowerAlone), and when estimated_wallet_singles came to be
// the sum of what the matches of one appearance alone are given, and
// those within chance's range came to be given 0 (SinglesInChance), and
// when a group given 0.5 or more came to tell sessions that fetch for
// other scripts apart for co-fetched claims (claimedGroups), and when a
// member that would be settled beside a match created in its transaction
// came to have a tenth of its group's (Match.BesidePayment), and when
// the warnings came to say "match" or "matches", "group" or "groups",
// "script" or "scripts", as their count asks (nothing else in the
// reports moved).
func TestAnalyzeMovedUnchanged(t *testing.T) {
	for _, c := range []struct {
		regime    simulate.Regime
		seed      uint64
		intersect bool
		sha256    string
	}{
		{simulate.RegimeStandard, 1, false, "feba81202bd8d8bccf8f7b5a66bcb7276d8e6e6bfe2b4b682de0e3e3bf00f883"},
		{simulate.RegimeChange, 2, true, "b1489f11637d96f107925988f2be47d37a49941f5d1a2e32ee53db7935677f58"},
	} {
		_, sessions, index := simulatedFetches(t, c.regime, c.seed)
		ir, err := universe.NewIndexReader(bytes.NewReader(index))
		if err != nil {
			t.Fatal(err)
		}
		reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{Intersect: c.intersect})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(reps, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != c.sha256 {
			t.Errorf("%s seed %d: the reports' JSON (%d bytes, %d sessions) hashes to %s, want %s", c.regime, c.seed, len(b), len(reps), got, c.sha256)
		}
	}
}
