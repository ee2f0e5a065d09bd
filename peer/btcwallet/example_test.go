package btcwallet_test

import (
	"context"
	"log"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcwallet/wallet"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the wallet's database driver
	"github.com/spvfilter/spvfilter/peer/btcwallet"
	"github.com/spvfilter/spvfilter/peer/client"
)

// A btcwallet wallet synced by spvfilter's client instead of neutrino:
// the client is connected and started as a service, the backend is
// started and given to the wallet. It needs nodes to talk to, so it is
// compiled but not run.
func Example() {
	ctx := context.Background()
	params := &chaincfg.RegressionNetParams
	c, err := client.Connect(ctx, client.Config{
		Peers:   []string{"127.0.0.1:18444", "127.0.0.1:18445", "127.0.0.1:18446"},
		Params:  params,
		DataDir: "spvfilter",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}

	loader := wallet.NewLoader(params, "wallet", true, 10*time.Second, 0)
	w, err := loader.OpenExistingWallet([]byte(wallet.InsecurePubPassphrase), false)
	if err != nil {
		log.Fatal(err)
	}
	backend := btcwallet.New(c, btcwallet.Config{})
	if err := backend.Start(); err != nil {
		log.Fatal(err)
	}
	w.SynchronizeRPC(backend)

	// ... use the wallet; once it has synced, w.ChainSynced() is true.

	// The wallet stops the backend but does not wait for it.
	if err := loader.UnloadWallet(); err != nil {
		log.Print(err)
	}
	backend.WaitForShutdown()
}
