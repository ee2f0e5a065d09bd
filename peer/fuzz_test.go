package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// pipePeer returns a Peer with cfg after a handshake, whose node side
// writes stream and then ends its side of the connection; with onRequest
// it first waits for the client's first message.
func pipePeer(t testing.TB, cfg Config, stream []byte, onRequest bool) *Peer {
	client, node := socketPair(t)
	p := startPeer(t, cfg, client)
	play := func() {
		node.Write(stream)
		node.CloseWrite()
	}
	if !onRequest {
		go play()
	}
	go func() {
		// Drain what the client sends, so its writes never block.
		buf := make([]byte, 4096)
		for first := onRequest; ; first = false {
			if _, err := node.Read(buf); err != nil {
				return
			}
			if first {
				go play()
			}
		}
	}()
	return p
}

var (
	pairMu sync.Mutex
	pairLn net.Listener
)

// socketPair returns the two ends of a Unix socket connection: unlike a
// pipe, one end can stop writing and still read, and unlike TCP, the
// many connections of a fuzzing run use up no ports.
func socketPair(t testing.TB) (*net.UnixConn, *net.UnixConn) {
	pairMu.Lock()
	defer pairMu.Unlock()
	if pairLn == nil {
		ln, err := net.Listen("unix", filepath.Join(os.TempDir(), fmt.Sprintf("peer-fuzz-%d-%d.sock", os.Getpid(), rand.Uint64())))
		if err != nil {
			t.Fatal(err)
		}
		pairLn = ln
	}
	a, err := net.Dial("unix", pairLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := pairLn.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.UnixConn), b.(*net.UnixConn)
}

// nodePipe returns a Peer with cfg after a handshake, and the node's
// end of its connection, a synchronous pipe: what the node does not read
// blocks the client's writer.
func nodePipe(t testing.TB, cfg Config) (*Peer, net.Conn) {
	client, node := net.Pipe()
	t.Cleanup(func() { node.Close() })
	return startPeer(t, cfg, client), node
}

// startPeer returns a Peer on conn with cfg (its address, network and
// timeout filled in), as after a handshake with a node serving
// everything.
func startPeer(t testing.TB, cfg Config, conn net.Conn) *Peer {
	cfg.Addr, cfg.Params = "127.0.0.1:1", &chaincfg.RegressionNetParams
	if cfg.Timeout == 0 {
		cfg.Timeout = 200 * time.Millisecond
	}
	p := newPeer(cfg, conn)
	p.remote = &wire.MsgVersion{ProtocolVersion: int32(wire.ProtocolVersion), UserAgent: "/fuzz/",
		Services: wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness | wire.SFNodeCF, LastBlock: 5}
	t.Cleanup(func() { p.Close() })
	return p
}

func frame(t testing.TB, msgs ...wire.Message) []byte {
	var b bytes.Buffer
	for _, m := range msgs {
		if _, err := wire.WriteMessageWithEncodingN(&b, m, wire.ProtocolVersion, chaincfg.RegressionNetParams.Net, wire.WitnessEncoding); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// FuzzPeerAnswers plays an arbitrary byte stream as a node's answers to
// every kind of request (and to none: unsolicited traffic only): each
// request ends with a result or a *PeerError, never a panic, a wrong
// answer is never taken for a right one, and what reaches the callbacks
// stays bounded.
func FuzzPeerAnswers(f *testing.F) {
	genesis := chaincfg.RegressionNetParams.GenesisHash
	hdrs := wire.NewMsgHeaders()
	hdrs.AddBlockHeader(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	cp := wire.NewMsgCFCheckpt(wire.GCSFilterRegular, genesis, 0)
	ch := wire.NewMsgCFHeaders()
	ch.StopHash = *genesis
	ch.AddCFHash(&chainhash.Hash{1})
	cf := wire.NewMsgCFilter(wire.GCSFilterRegular, genesis, []byte{0})
	mb := wire.NewMsgMerkleBlock(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	nf := wire.NewMsgNotFound()
	nf.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, genesis))
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, genesis))
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &chainhash.Hash{2}))
	addr := wire.NewMsgAddr()
	addr.AddAddress(wire.NewNetAddressIPPort(net.IPv4(1, 2, 3, 4), 8333, wire.SFNodeNetwork))
	addrV2 := wire.NewMsgAddrV2()
	addrV2.AddrList = append(addrV2.AddrList, wire.NetAddressV2FromBytes(time.Unix(1e9, 0), 0, []byte{5, 6, 7, 8}, 8333))
	reject := wire.NewMsgReject(wire.CmdTx, wire.RejectDuplicate, "already have transaction in mempool")
	coinbase := chaincfg.RegressionNetParams.GenesisBlock.Transactions[0]
	for i, seed := range [][]wire.Message{
		{hdrs}, {wire.NewMsgHeaders()}, {cp}, {ch}, {cf}, {chaincfg.RegressionNetParams.GenesisBlock},
		{mb, wire.NewMsgPong(0)}, {nf}, {wire.NewMsgPing(7), cf}, {inv, hdrs, coinbase}, {addr, addrV2, wire.NewMsgPong(1)},
		{reject, nf}, {inv, addr, reject, wire.NewMsgPing(1)},
	} {
		f.Add(frame(f, seed...), uint8(i))
	}
	f.Add([]byte{0xfa, 0xbf, 0xb5, 0xda, 'x'}, uint8(3))
	// Whole frames whose payloads do not decode, or are damaged.
	f.Add(rawFrame(wire.CmdCFilter, append(make([]byte, 33), 5, 1, 2)), uint8(3))
	f.Add(rawFrame(wire.CmdCFCheckpt, insaneCheckpoints()), uint8(1))
	damaged := frame(f, chaincfg.RegressionNetParams.GenesisBlock)
	damaged[len(damaged)-1] ^= 1
	f.Add(damaged, uint8(4))
	f.Fuzz(func(t *testing.T, stream []byte, which uint8) {
		const requests = 9
		var tooMany atomic.Bool
		cfg := Config{
			OnAnnounce: func(a Announcement) {
				if len(a.Blocks) > maxPending || len(a.Txs) > maxPending || len(a.Blocks)+len(a.Txs) == 0 {
					tooMany.Store(true)
				}
			},
			OnAddresses: func(addrs []*wire.NetAddressV2) {
				if len(addrs) > maxPending || len(addrs) == 0 {
					tooMany.Store(true)
				}
			},
		}
		p := pipePeer(t, cfg, stream, which%requests != 8)
		ctx := context.Background()
		txid := coinbase.TxHash()
		var err error
		switch which % requests {
		case 0:
			_, err = p.SyncHeaders(ctx, chain.New(&chaincfg.RegressionNetParams))
		case 1:
			_, err = p.GetCFCheckpt(ctx, *genesis, 0)
		case 2:
			_, _, err = p.GetCFHeaders(ctx, 0, *genesis, 1)
		case 3:
			err = p.GetCFilters(ctx, 0, []chainhash.Hash{*genesis}, func(int, []byte) error { return nil })
		case 4:
			err = p.GetBlocks(ctx, []chainhash.Hash{*genesis}, func(_ int, b *wire.MsgBlock) error {
				if b.BlockHash() != *genesis {
					t.Fatalf("block %v delivered for %v", b.BlockHash(), genesis)
				}
				return nil
			})
		case 5:
			var blocks []FilteredBlock
			blocks, err = p.GetFilteredBlocks(ctx, []chainhash.Hash{*genesis})
			if err == nil && (len(blocks) != 1 || blocks[0].Header.BlockHash() != *genesis) {
				t.Fatalf("filtered blocks %+v", blocks)
			}
		case 6:
			_, err = p.HasTx(ctx, txid)
		case 7:
			var addrs []*wire.NetAddressV2
			addrs, err = p.GetAddr(ctx)
			if len(addrs) > wire.MaxAddrPerMsg {
				t.Fatalf("%d addresses", len(addrs))
			}
		case 8:
			<-p.Done()
			err = p.Err()
			if !errors.Is(err, ErrDisconnected) && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrFlooding) {
				t.Fatalf("connection ended with %v", err)
			}
		}
		var pe *PeerError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("request %d: error %v is not a *PeerError", which%requests, err)
		}
		if tooMany.Load() {
			t.Fatal("a callback got an empty or unbounded batch")
		}
	})
}
