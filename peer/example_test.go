package peer_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
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

// Through Tor's SOCKS5 proxy: the proxy resolves the name (an onion
// address here), and nothing is dialled without it. A transaction the
// node refuses says why.
func ExampleSOCKS5() {
	dial, err := peer.SOCKS5("socks5://127.0.0.1:9050")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	p, err := peer.Dial(ctx, peer.Config{Addr: "yournodeonionaddress.onion:8333", Params: &chaincfg.MainNetParams, Dial: dial})
	if err != nil {
		log.Fatal(err) // names the proxy and what it refused
	}
	defer p.Close()
	tx := wire.NewMsgTx(wire.TxVersion) // a signed transaction
	var re *peer.RejectError
	switch err := p.Broadcast(ctx, tx); {
	case errors.As(err, &re) && re.Kind == peer.RejectInsufficientFee:
		fmt.Println("raise the fee:", re.Reason)
	case err != nil:
		log.Fatal(err)
	}
}
