package addrbook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// TestLocalBookFloodReplacesItsOwnAddresses: the regtest book holds 600
// addresses three honest peers gossiped, none dialled yet; then one peer
// sends one addr message of 1,000 addresses of its own (within its
// quota: sourceBurst), and another after its quota refilled. The peer
// holds at most maxLocalPerSource addresses never used, its later ones
// replacing its own: every honest address stays.
func TestLocalBookFloodReplacesItsOwnAddresses(t *testing.T) {
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
	c.advance(sourceBurst * sourceRefill)
	for i := range flood {
		flood[i] = na(t, fmt.Sprintf("10.67.%d.%d:18444", i/256, i%256), wire.SFNodeNetwork|wire.SFNodeCF)
	}
	added += b.Add(flood, "127.0.0.66:18444")
	ks, err := b.Known()
	if err != nil {
		t.Fatal(err)
	}
	kept, flooded := 0, 0
	for _, k := range ks {
		switch {
		case strings.HasPrefix(k.Addr, "10.1."):
			kept++
		case strings.HasPrefix(k.Addr, "10.66."), strings.HasPrefix(k.Addr, "10.67."):
			flooded++
		}
	}
	t.Logf("the flood added %d addresses; %d of the %d honest ones kept, %d of the flood's, %d addresses in all", added, kept, honest, flooded, len(ks))
	if kept != honest {
		t.Errorf("two addr messages from one peer left %d of %d honest addresses in the book, want all", kept, honest)
	}
	if flooded > maxLocalPerSource {
		t.Errorf("the flooding peer holds %d addresses, want at most %d", flooded, maxLocalPerSource)
	}
}
