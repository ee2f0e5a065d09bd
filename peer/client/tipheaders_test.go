package client

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// headerBytes counts the bytes of the filter-header answers (cfheaders
// and cfcheckpt) a node sends through a peertest.Liar, and the filter
// hashes they carry.
type headerBytes struct {
	mu             sync.Mutex
	n, hashes      int
	headers, cpMsg int
}

func (b *headerBytes) lie(m wire.Message) ([]wire.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch msg := m.(type) {
	case *wire.MsgCFHeaders:
		b.hashes += len(msg.FilterHashes)
		b.headers++
	case *wire.MsgCFCheckpt:
		b.cpMsg++
	default:
		return []wire.Message{m}, false
	}
	var buf bytes.Buffer
	if err := m.BtcEncode(&buf, wire.ProtocolVersion, wire.WitnessEncoding); err == nil {
		b.n += wire.MessageHeaderSize + buf.Len()
	}
	return []wire.Message{m}, false
}

func (b *headerBytes) reset() (n, hashes, headers, checkpoints int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, hashes, headers, checkpoints = b.n, b.hashes, b.headers, b.cpMsg
	b.n, b.hashes, b.headers, b.cpMsg = 0, 0, 0, 0
	return n, hashes, headers, checkpoints
}

// TestFollowAsksNewFilterHeaderAlone: a service with a data directory
// follows the tip of a chain past the first checkpoint through two peers.
// Each new block's filter header is still compared between both peers,
// but each is asked for that header alone: the filter-header bytes the
// peers send per new block are bounded by one getcfheaders answer of one
// hash each, without the checkpoints.
func TestFollowAsksNewFilterHeaderAlone(t *testing.T) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
	var counts [2]headerBytes
	a := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[0].lie)
	b := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[1].lie)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Config{Peers: []string{a.Addr, b.Addr}, Params: node.Params, DataDir: t.TempDir(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	startService(t, c)
	tip := fx.tip
	log, stop := follow(t, c, tip-5, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip", tipAt(tip))
	for i := range counts {
		counts[i].reset()
	}
	const blocks = 8
	for i := int32(1); i <= blocks; i++ {
		node.Generate(t, 1)
		log.waitFor(t, "the new block", tipAt(tip+i))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// One answer of one hash per peer and block: 24 bytes of message
	// header, the filter type, the stop hash, the previous header, the
	// count and the hash. A block one peer announced before the other is
	// asked again once both hold it (it rested on one peer): twice at
	// most. The checkpoints, whose answer grows with the chain (32 bytes
	// a thousand blocks), are not asked at all.
	const perBlock = wire.MessageHeaderSize + 1 + 32 + 32 + 1 + 32
	for i := range counts {
		n, hashes, headers, checkpoints := counts[i].reset()
		t.Logf("peer %d: %d bytes of filter headers for %d new blocks (%d cfheaders of %d hashes, %d cfcheckpt)",
			i, n, blocks, headers, hashes, checkpoints)
		switch {
		case hashes == 0:
			t.Errorf("peer %d was asked for no filter header: the new blocks were not compared", i)
		case checkpoints > 0:
			t.Errorf("peer %d was asked for its checkpoints %d times while following", i, checkpoints)
		case hashes > 2*blocks || n > 2*blocks*perBlock:
			t.Errorf("peer %d sent %d filter hashes in %d bytes for %d new blocks, want at most %d in %d bytes", i, hashes, n, blocks, 2*blocks, 2*blocks*perBlock)
		}
	}
}
