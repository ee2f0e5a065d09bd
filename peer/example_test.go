package peer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
)

// A scan of a whole chain with BIP 157 compact filters.
func Example() {
	params := &chaincfg.RegressionNetParams
	addr, err := btcutil.DecodeAddress("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", params)
	if err != nil {
		log.Fatal(err)
	}
	script, _ := txscript.PayToAddrScript(addr)

	ctx := context.Background()
	p, err := peer.Dial(ctx, peer.Config{Addr: "127.0.0.1:18444", Params: params, Timeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	chain, err := p.SyncHeaders(ctx)
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.ScanBIP157(ctx, chain, [][]byte{script}, 0, chain.Height(), nil)
	if err != nil {
		log.Fatal(err) // a *peer.PeerError says which peer did what
	}
	for _, m := range res.Matches {
		fmt.Println(m.Height, m.Txid)
	}
}

func ExampleNewWatchFilter() {
	params := &chaincfg.RegressionNetParams
	addr, _ := btcutil.DecodeAddress("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", params)
	script, _ := txscript.PayToAddrScript(addr)
	f, err := peer.NewWatchFilter([][]byte{script}, 0.0001, 0)
	if err != nil {
		log.Fatal(err)
	}
	// The filter holds the witness program, the data push of the script.
	fmt.Println(f.Contains(script[2:]), f.Flags() == wire.BloomUpdateAll)
	// Output: true true
}

func ExampleNewHeaderChain() {
	chain := peer.NewHeaderChain(&chaincfg.RegressionNetParams)
	fmt.Println(chain.Height(), chain.Hash(0))
	// Output: 0 0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206
}
