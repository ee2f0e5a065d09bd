package peer

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// fuzzPeer returns a Peer after a handshake, whose node side writes
// stream and then closes: every request then reads what the stream holds.
func fuzzPeer(t *testing.T, stream []byte) *Peer {
	client, node := net.Pipe()
	params := &chaincfg.RegressionNetParams
	p := &Peer{
		cfg:  Config{Addr: "127.0.0.1:1", Params: params, Timeout: 200 * time.Millisecond},
		conn: client,
		msgs: make(chan wire.Message, 256),
		done: make(chan struct{}),
		remote: &wire.MsgVersion{ProtocolVersion: int32(wire.ProtocolVersion), UserAgent: "/fuzz/",
			Services: wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness | wire.SFNodeCF, LastBlock: 5},
	}
	p.pver.Store(wire.ProtocolVersion)
	go p.readLoop()
	go func() {
		// Drain what the client sends, so its writes never block.
		buf := make([]byte, 4096)
		for {
			if _, err := node.Read(buf); err != nil {
				return
			}
		}
	}()
	go func() {
		node.Write(stream)
		node.Close()
	}()
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
// every kind of request: each request ends with a result or a *PeerError,
// never a panic, and a wrong answer is never taken for a right one.
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
	for _, seed := range [][]wire.Message{
		{hdrs}, {wire.NewMsgHeaders()}, {cp}, {ch}, {cf}, {chaincfg.RegressionNetParams.GenesisBlock},
		{mb, wire.NewMsgPong(0)}, {nf}, {wire.NewMsgPing(7), cf},
	} {
		f.Add(frame(f, seed...), uint8(0))
	}
	f.Add([]byte{0xfa, 0xbf, 0xb5, 0xda, 'x'}, uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, which uint8) {
		p := fuzzPeer(t, stream)
		ctx := context.Background()
		var err error
		switch which % 6 {
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
		}
		var pe *PeerError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("request %d: error %v is not a *PeerError", which%6, err)
		}
	})
}
