package peer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDamagedChecksum: a message whose payload fails the checksum its
// header gives, as it is read, ends the connection with ErrDamaged, which
// is no protocol violation.
func TestDamagedChecksum(t *testing.T) {
	bad := rawFrame(wire.CmdPing, make([]byte, 8))
	bad[20] ^= 1
	p := pipePeer(t, Config{}, bad, false)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
	checkPeerError(t, p.Err(), p.Addr(), ErrDamaged)
	if errors.Is(p.Err(), ErrProtocol) || !strings.Contains(p.Err().Error(), `"ping"`) {
		t.Fatalf("error %q", p.Err())
	}
}

// TestDamageOnTheWay puts a relay between an honest node and the peer
// that flips one byte of the first message of a command, leaving its
// header's checksum as the node computed it. Wherever the byte falls, in
// a message checked as it is read or one whose checksum is left to its
// commitment, the request fails with ErrDamaged and with none of the
// errors that prove a lie: the node sent nothing false.
func TestDamageOnTheWay(t *testing.T) {
	needFixture(t)
	c := syncHeaders(t, dial(t, fx.node.P2PAddr, 0))
	const height = 102 // holds fx.pay
	hash := c.Hash(height)
	getFilter := func(p *Peer) error {
		_, hashes, err := p.GetCFHeaders(context.Background(), height, hash, 1)
		if err != nil {
			return err
		}
		return p.GetCFilters(context.Background(), height, []chainhash.Hash{hash}, func(_ int, data []byte) error {
			if chainhash.DoubleHashH(data) != hashes[0] {
				return errors.New("filter does not hash to its filter hash")
			}
			return nil
		})
	}
	getBlock := func(p *Peer) error {
		return p.GetBlocks(context.Background(), []chainhash.Hash{hash}, func(int, *wire.MsgBlock) error { return nil })
	}
	syncAll := func(p *Peer) error {
		_, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params))
		return err
	}
	tests := []struct {
		name string
		cmd  string
		at   int // payload offset of the flipped byte; negative from the end
		get  func(*Peer) error
	}{
		{"cfilter data", wire.CmdCFilter, -1, getFilter},
		{"cfilter block hash", wire.CmdCFilter, 5, getFilter},
		{"cfilter length", wire.CmdCFilter, cfilterHead, getFilter},
		{"block header", wire.CmdBlock, 40, getBlock},
		{"block last transaction", wire.CmdBlock, -2, getBlock},
		{"block transaction count", wire.CmdBlock, wire.MaxBlockHeaderPayload, getBlock},
		{"cfheaders, checked as read", wire.CmdCFHeaders, -1, getFilter},
		{"headers, checked as read", wire.CmdHeaders, 10, syncAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := peertest.NewDamager(t, fx.node.P2PAddr, tt.cmd, tt.at)
			p := dial(t, r.Addr, 10*time.Second)
			err := tt.get(p)
			if r.Damaged() == 0 {
				t.Fatalf("no %q message passed the relay (error %v)", tt.cmd, err)
			}
			checkPeerError(t, err, r.Addr, ErrDamaged)
			for _, lie := range []error{ErrProtocol, ErrBadFilter, ErrBadFilterHeader, ErrBadBlock, ErrBadProof, ErrBadHeaders, ErrMissingTransactions} {
				if errors.Is(err, lie) {
					t.Fatalf("damage on the way reported as %v: %v", lie, err)
				}
			}
			<-p.Done()
		})
	}
}
