//go:build openattacks

// An attack on the address book not answered yet: go test -tags
// openattacks runs it.

package addrbook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// TestLocalBookOneGossipKeepsHonestAddresses: the regtest book holds 600
// addresses three honest peers gossiped, none dialled yet; then one peer
// sends one addr message of 1,000 addresses of its own (within its
// quota: sourceBurst). The quota is meant to bound what one peer's flood
// can push out (see Book): at least half of the honest addresses must
// stay.
//
// Not answered yet: the local book holds maxLocalAddresses (1,000), as
// many as one source may add at once, and a new address replaces the one
// seen longest ago never used, whoever gave it: one message pushes out
// every honest address (the attacker's are seen now).
func TestLocalBookOneGossipKeepsHonestAddresses(t *testing.T) {
	c := newClock()
	b, _ := openBook(t, &chaincfg.RegressionNetParams, "", c.now)
	const honest = 600
	for src := range 3 {
		addrs := make([]*wire.NetAddressV2, honest/3)
		for i := range addrs {
			addrs[i] = na(t, fmt.Sprintf("10.1.%d.%d:18444", src, i), wire.SFNodeNetwork|wire.SFNodeCF)
			addrs[i].Timestamp = c.now().Add(-time.Hour)
		}
		if n := b.Add(addrs, fmt.Sprintf("127.0.0.%d:18444", src+1)); n != len(addrs) {
			t.Fatalf("honest source %d: %d of %d added", src, n, len(addrs))
		}
	}
	c.advance(time.Minute)
	flood := make([]*wire.NetAddressV2, sourceBurst)
	for i := range flood {
		flood[i] = na(t, fmt.Sprintf("10.66.%d.%d:18444", i/256, i%256), wire.SFNodeNetwork|wire.SFNodeCF)
	}
	added := b.Add(flood, "127.0.0.66:18444")
	ks, err := b.Known()
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, k := range ks {
		if strings.HasPrefix(k.Addr, "10.1.") {
			kept++
		}
	}
	t.Logf("the flood added %d addresses; %d of the %d honest ones kept, %d addresses in all", added, kept, honest, len(ks))
	if kept < honest/2 {
		t.Errorf("one addr message from one peer left %d of %d honest addresses in the book, want at least %d", kept, honest, honest/2)
	}
}
