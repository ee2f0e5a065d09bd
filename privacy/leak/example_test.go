package leak_test

import (
	"fmt"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// ExampleCompute: a client that fetched its wallet's blocks from three
// peers (most from the one that gave their filters), and holds every
// filter it scanned, reports what each peer, and all three colluding,
// can tell of its 12 scripts. A peer asked for a block outside its
// filter range takes the client to have scanned up to it.
func ExampleCompute() {
	c := newTestChain(&testing.T{}, chainSpec{blocks: 300, txs: 12, wallet: 12, seed: 9})
	in := leak.Input{Params: c.params, Views: c.views, Tip: c.tip, Watched: c.watched,
		Blocks: c.block, Filters: heldFilters{c, nil}}
	l, err := leak.Compute(in, leak.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range l.Peers {
		fmt.Printf("%s saw %d of %d blocks: %d of %d scripts at >= 0.95\n", *p.Address, p.BlocksFetched, p.BlocksScanned, p.Confident, l.WatchedScripts)
	}
	fmt.Printf("colluding, %d blocks fetched: %d at >= 0.95, %d at >= 0.5\n", l.Collusion.BlocksFetched, l.Collusion.Confident, l.Collusion.Likely)
	// Output:
	// 127.0.0.1:1 saw 9 of 254 blocks: 0 of 12 scripts at >= 0.95
	// 127.0.0.1:2 saw 10 of 222 blocks: 0 of 12 scripts at >= 0.95
	// 127.0.0.1:3 saw 5 of 300 blocks: 0 of 12 scripts at >= 0.95
	// colluding, 24 blocks fetched: 0 at >= 0.95, 8 at >= 0.5
}
