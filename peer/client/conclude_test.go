package client

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestStoreRefusalInWarnings: filter headers verified whose first does
// not follow the header the data directory's store ends with (the store
// changed during the verification) are not stored, and the operation's
// result says so rather than the client's log alone.
func TestStoreRefusalInWarnings(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 10)
	c := connectWith(t, Config{Peers: []string{node.P2PAddr}, Params: node.Params, Timeout: 5 * time.Second, DataDir: t.TempDir()})
	if _, err := c.ScanBIP157(context.Background(), ScanRequest{To: -1}); err != nil {
		t.Fatal(err)
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	tip := c.st.FilterHeaderTip()
	if tip < 1 {
		t.Fatalf("premise: the store holds filter headers up to %d", tip)
	}
	// The headers of tip..tip+1, the first not the one stored at tip.
	full := []chainhash.Hash{{1}, {2}}
	v := &verification{c: c, log: newScanLog(), from: tip + 1, to: tip + 1, asked: tip + 1}
	if _, _, err := v.conclude(full, tip+1, tip+1); err != nil {
		t.Fatal(err)
	}
	if got := c.st.FilterHeaderTip(); got != tip {
		t.Errorf("the store ends at %d, want %d: headers not following its own were stored", got, tip)
	}
	if !slices.ContainsFunc(v.log.notes, func(n string) bool { return strings.Contains(n, "not stored") }) {
		t.Errorf("the headers not stored are not in the result's warnings: %q", v.log.notes)
	}
}
