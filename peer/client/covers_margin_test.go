package client

import (
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestCoversMarginNotScanned: a covered scan from a height above some
// of the wallet's blocks (a scan resumed there), whose covers' margin
// below From (rangeMargin) holds blocks of the wallet's, reports the
// matches a scan without covers reports, none below From, though it
// asks for blocks of the margin, the wallet's among them. It fails
// where the matches differ or one lies below From, and, so as to be
// able to fail, where no data directory's covered scan asked for a
// block of the wallet's below From (then nothing was tested).
func TestCoversMarginNotScanned(t *testing.T) {
	const dirs = 6 // data directories (margins) tried
	f := needCovers(t)
	wallet := map[int32]bool{}
	for _, a := range f.chain.Wallets[0].Scripts {
		for _, h := range f.chain.Heights[a] {
			wallet[h] = true
		}
	}
	walletAt := slices.Sorted(func(yield func(int32) bool) {
		for h := range wallet {
			if !yield(h) {
				return
			}
		}
	})
	from := walletAt[len(walletAt)/3] + 1
	height := map[chainhash.Hash]int32{}
	for h := max(from-maxCoverMargin, 0); h < from; h++ {
		hash, err := f.node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		height[*hash] = h
	}
	keys := func(res *ScanResult) []string {
		var out []string
		for _, m := range res.Matches {
			out = append(out, fmt.Sprintf("%d %v", m.Height, m.Txid))
		}
		slices.Sort(out)
		return out
	}
	plain, err := coverRun{dir: t.TempDir(), from: from}.scan(t, f, relaysTo(t, f, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := keys(plain)
	if len(want) == 0 {
		t.Fatalf("no match from height %d: nothing to compare", from)
	}
	tested := 0 // data directories whose covered scan asked for a wallet's block below from
	for range dirs {
		relays := relaysTo(t, f, 2)
		var margin int32
		res, err := coverRun{dir: t.TempDir(), target: xsessionTarget, from: from,
			cfg:   func(c *Config) { c.AllowShortCovers = true },
			after: func(cl *Client, _ *ScanResult) { margin = rangeMargin(cl.covers) }}.scan(t, f, relays)
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(res); !slices.Equal(got, want) {
			t.Errorf("margin %d: the covered scan from %d matched %v, the plain one %v", margin, from, got, want)
		}
		for _, m := range res.Matches {
			if m.Height < from {
				t.Errorf("margin %d: a match at height %d, below the scan's From %d", margin, m.Height, from)
			}
		}
		below, walletBelow := 0, 0
		for _, r := range relays {
			for _, hs := range blockRequests(r) {
				for _, hash := range hs {
					if h, ok := height[hash]; ok {
						below++
						if wallet[h] {
							walletBelow++
						}
					}
				}
			}
		}
		t.Logf("margin %d: %d blocks asked below From %d, %d of them the wallet's; %d matches (%d without covers), %d blocks fetched, %d filters received",
			margin, below, from, walletBelow, len(res.Matches), len(plain.Matches), res.BlocksFetched, res.FiltersReceived)
		if walletBelow > 0 {
			tested++
		}
	}
	if tested == 0 {
		t.Errorf("no covered scan of %d asked for a block of the wallet's below From %d: nothing tested", dirs, from)
	}
}
