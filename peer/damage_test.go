package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
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
			r := newFlipRelay(t, fx.node.P2PAddr, tt.cmd, tt.at)
			p := dial(t, r.addr, 10*time.Second)
			err := tt.get(p)
			if !r.flipped() {
				t.Fatalf("no %q message passed the relay (error %v)", tt.cmd, err)
			}
			checkPeerError(t, err, r.addr, ErrDamaged)
			for _, lie := range []error{ErrProtocol, ErrBadFilter, ErrBadFilterHeader, ErrBadBlock, ErrBadProof, ErrBadHeaders, ErrMissingTransactions} {
				if errors.Is(err, lie) {
					t.Fatalf("damage on the way reported as %v: %v", lie, err)
				}
			}
			<-p.Done()
		})
	}
}

// flipRelay is a loopback relay to a node that flips one byte of the
// payload of the first message of a command it passes to the client.
type flipRelay struct {
	addr string
	cmd  string
	at   int

	mu   sync.Mutex
	done bool
}

func newFlipRelay(t *testing.T, target, cmd string, at int) *flipRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &flipRelay{addr: ln.Addr().String(), cmd: cmd, at: at}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			node, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, node)
			mu.Unlock()
			wg.Add(2)
			go func() {
				defer wg.Done()
				io.Copy(node, client)
				node.Close()
			}()
			go func() {
				defer wg.Done()
				r.pipe(client, node)
				client.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return r
}

// pipe copies the node's frames to the client, flipping a byte of the
// first of r.cmd.
func (r *flipRelay) pipe(client, node net.Conn) {
	hdr := make([]byte, wire.MessageHeaderSize)
	for {
		if _, err := io.ReadFull(node, hdr); err != nil {
			return
		}
		payload := make([]byte, binary.LittleEndian.Uint32(hdr[16:20]))
		if _, err := io.ReadFull(node, payload); err != nil {
			return
		}
		cmd := strings.TrimRight(string(hdr[4:16]), "\x00")
		r.mu.Lock()
		if cmd == r.cmd && !r.done && len(payload) > 0 {
			i := r.at
			if i < 0 {
				i += len(payload)
			}
			payload[min(max(i, 0), len(payload)-1)] ^= 0x10
			r.done = true
		}
		r.mu.Unlock()
		if _, err := client.Write(append(hdr, payload...)); err != nil {
			return
		}
	}
}

// flipped reports whether the relay has flipped its byte.
func (r *flipRelay) flipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}
