package peer

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// TestAnnounceAgainWhenNotAsked: a node that drops the first inv of a
// transaction, as btcd does with an inv from a peer its sync manager has
// not registered yet (right after the handshake), asks for it at the
// inv sent again; Announce reports it requested, within the timeout.
// (Before, the one inv was lost and the send failed: "did not ask for it
// and does not hold it".)
func TestAnnounceAgainWhenNotAsked(t *testing.T) {
	p, node := nodePipe(t, Config{Timeout: 3 * time.Second})
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(1000, []byte{0x51}))
	invs := make(chan int, 1)
	go func() {
		n := 0
		for {
			_, m, _, err := wire.ReadMessageWithEncodingN(node, wire.ProtocolVersion, chaincfg.RegressionNetParams.Net, wire.WitnessEncoding)
			if err != nil {
				invs <- n
				return
			}
			if inv, ok := m.(*wire.MsgInv); ok {
				n++
				if n == 2 {
					get := wire.NewMsgGetData()
					get.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &inv.InvList[0].Hash))
					go node.Write(frame(t, get))
				}
			}
		}
	}()
	start := time.Now()
	requested, err := p.Announce(context.Background(), tx)
	took := time.Since(start)
	p.Close()
	node.Close()
	if err != nil || !requested {
		t.Fatalf("Announce: requested %v, %v after %v, %d inv(s) sent", requested, err, took, <-invs)
	}
	if n := <-invs; n != 2 {
		t.Errorf("%d invs sent, want 2: the first dropped, the second asked for", n)
	}
	t.Logf("asked for after %v", took.Round(time.Millisecond))
}
