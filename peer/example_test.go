package peer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// One connection: the handshake, then the node's header chain, checked
// header by header.
func Example() {
	params := &chaincfg.RegressionNetParams
	ctx := context.Background()
	p, err := peer.Dial(ctx, peer.Config{Addr: "127.0.0.1:18444", Params: params, Timeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err) // a *peer.PeerError names the peer and what it did
	}
	defer p.Close()
	c := chain.New(params)
	if _, err := p.SyncHeaders(ctx, c); err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.UserAgent(), c.Height(), c.Hash(c.Height()))
}
