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
)

// A Bitcoin Core node serves no transaction of its mempool by getdata
// before it has announced it, and never announces one to the connection
// it got it from: a second connection that asks for announcements learns
// that it took the transaction. Open the watch before the broadcast.
func ExampleWatchTx() {
	cfg := peer.Config{Addr: "127.0.0.1:18444", Params: &chaincfg.RegressionNetParams, Timeout: 30 * time.Second}
	ctx := context.Background()
	tx := wire.NewMsgTx(wire.TxVersion) // a signed transaction
	w, err := peer.WatchTx(ctx, cfg, tx.TxHash())
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	p, err := peer.Dial(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	s, err := p.BroadcastWatched(ctx, tx, w)
	if errors.Is(err, peer.ErrFalseAnnouncement) {
		log.Fatal("announced, then not served: ", err) // a *peer.FalseAnnounceError, at once
	}
	if err != nil {
		log.Fatal(err) // a *peer.RejectError; after the timeout, a *peer.DroppedError (btcd) or a *peer.NoVerdictError (another node)
	}
	if s != nil {
		fmt.Printf("%s announced %v %v after the watch opened (on its word)\n", s.Peer, s.Txid, s.After)
	}
}
