package client_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/client"
)

// A send that no peer confirmed: every peer was a node that gives no
// verdict of its own (Bitcoin Core), and none announced the transaction
// in time. The caller tells this outcome from a refusal with errors.As,
// however the error was wrapped, and reads each peer's case.
func ExampleNoneConfirmedError() {
	// What SendTransaction returned, wrapped by the caller's own code.
	err := fmt.Errorf("pay invoice: %w", &client.NoneConfirmedError{
		Txid: chainhash.Hash{1},
		Peers: []error{&client.NotConfirmedError{
			Peer: "127.0.0.1:18444", Txid: chainhash.Hash{1}, Waited: 30 * time.Second, Watched: true,
		}},
	})

	var none *client.NoneConfirmedError
	if errors.As(err, &none) {
		fmt.Println("not confirmed, not refused: send again later")
		for _, perr := range none.Peers {
			var nc *client.NotConfirmedError
			if errors.As(perr, &nc) {
				fmt.Printf("%s: waited %v, %s\n", nc.Peer, nc.Waited, nc.Announcement())
			}
		}
	}
	fmt.Println(errors.Is(err, client.ErrNotConfirmed))
	// Output:
	// not confirmed, not refused: send again later
	// 127.0.0.1:18444: waited 30s, did not announce it
	// true
}
