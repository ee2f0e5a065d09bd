package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// A wallet's whole flow on the service: connect, keep in sync, rescan
// from the wallet's birthday and follow the tip, learn of a payment, send
// a transaction and see it mined.
func Example_wallet() {
	node, stop := exampleNode() // a regtest btcd on loopback, for the example
	defer stop()
	wallet := peertest.NewKey("example wallet")
	birthday := time.Now().Add(-time.Hour)

	dir, _ := os.MkdirTemp("", "wallet")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, client.Config{
		Peers:   []string{node.P2PAddr}, // several, in practice: each is compared with the others
		Params:  node.Params,
		DataDir: dir, // headers, filter headers and a filter cache, resumed next time
		Timeout: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil { // background sync, redials
		log.Fatal(err)
	}

	// Rescan from the birthday and follow the tip; events come in order.
	paid := make(chan *client.Match, 1)
	r := c.NewRescan(client.RescanOptions{
		Watch:     []client.WatchItem{client.ScriptItem(wallet.P2WPKHScript())},
		StartTime: birthday,
		Follow:    true,
		OnEvent: func(e client.Event) {
			if e.Kind == client.EventMatch {
				paid <- e.Match
			}
		},
	})
	go r.Run(ctx)

	// Someone pays the wallet.
	pay, err := node.SpendCoinbaseErr(wire.NewTxOut(50_000_000, wallet.P2WPKHScript()))
	if err != nil {
		log.Fatal(err)
	}
	node.ConfirmErr(pay)
	m := <-paid
	fmt.Printf("paid %v at height %d\n", btcutil.Amount(m.Tx.TxOut[0].Value), m.Height)

	// The wallet spends it; the rescan's outpoint tracking sees the spend
	// too once mined.
	spend, err := peertest.BuildSpendErr([]peertest.Output{peertest.OutputOf(m.Tx, 0, wallet)},
		wire.NewTxOut(50_000_000-peertest.Fee, peertest.NewKey("shop").P2WPKHScript()))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.SendTransaction(ctx, spend)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sent to", len(res.Accepted), "peer(s)")
	node.ConfirmErr(spend)
	s := <-paid
	fmt.Println("spend mined:", s.Txid == spend.TxHash())
	// Output:
	// paid 0.50000000 BTC at height 442
	// sent to 1 peer(s)
	// spend mined: true
}

// exampleNode starts a regtest btcd on loopback with segwit active
// (btcd's regtest enforces it from height 432) for the examples.
func exampleNode() (*peertest.Node, func()) {
	node, err := peertest.Start(peertest.WithArgs("--nobanning"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := node.GenerateErr(441); err != nil {
		log.Fatal(err)
	}
	return node, func() { node.Stop() }
}
