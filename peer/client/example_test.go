package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/spvfilter/spvfilter/peer/client"
)

// A BIP 157 scan of a whole chain over three peers: their filter headers
// are compared, disputes are settled against the blocks, and a peer that
// lies is banned and named.
func Example() {
	params := &chaincfg.RegressionNetParams
	addr, err := btcutil.DecodeAddress("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", params)
	if err != nil {
		log.Fatal(err)
	}
	script, _ := txscript.PayToAddrScript(addr)

	ctx := context.Background()
	c, err := client.Connect(ctx, client.Config{
		Peers:   []string{"127.0.0.1:18444", "127.0.0.1:18445", "127.0.0.1:18446"},
		Params:  params,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := c.ScanBIP157(ctx, client.ScanRequest{
		Watch: []client.WatchItem{client.ScriptItem(script)},
		From:  0,
		To:    c.Chain().Height(),
	})
	if err != nil {
		log.Fatal(err) // a *peer.PeerError names the peer, client.ErrNoPeers says none was left
	}
	for _, m := range res.Matches {
		fmt.Println(m.Height, m.Txid)
	}
	for _, w := range res.Warnings {
		fmt.Println("warning:", w)
	}
}
