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
// seeds). A change meant to alter the reports updates them, saying why.
func TestAnalyzeMovedUnchanged(t *testing.T) {
	for _, c := range []struct {
		regime    simulate.Regime
		seed      uint64
		intersect bool
		sha256    string
	}{
		{simulate.RegimeStandard, 1, false, "57153c678960e90ec8e19edfd9052e4d56145438bc3951980efcf5dbb3aa6f29"},
		{simulate.RegimeChange, 2, true, "ba6dc54148dcde2548ff8b818330be91b0f1d11fb8c849ee4bfe853acd2b27a8"},
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
