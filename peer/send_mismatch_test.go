package peer

import (
	"context"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestBroadcastWatchMismatch: a watch of another node or of another
// transaction is refused before anything is sent, with ErrWatchMismatch.
func TestBroadcastWatchMismatch(t *testing.T) {
	tx := wire.NewMsgTx(2)
	tx.AddTxOut(wire.NewTxOut(1, []byte{0x51}))
	p := &Peer{cfg: Config{Addr: "127.0.0.1:1"}}
	tests := []struct {
		name string
		addr string
		txid chainhash.Hash
	}{
		{"another node", "127.0.0.1:2", tx.TxHash()},
		{"another transaction", "127.0.0.1:1", chainhash.Hash{1}},
	}
	for _, tt := range tests {
		w := &TxWatch{p: &Peer{cfg: Config{Addr: tt.addr}}, txid: tt.txid}
		if _, err := p.BroadcastWatched(context.Background(), tx, w); !errors.Is(err, ErrWatchMismatch) {
			t.Errorf("%s: error %v, want ErrWatchMismatch", tt.name, err)
		}
	}
}
