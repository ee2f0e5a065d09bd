package peer

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
)

// MaxFilteredBlocksPerRequest is how many filtered blocks one
// GetFilteredBlocks asks for.
const MaxFilteredBlocksPerRequest = 500

// FilteredBlock is a verified merkle block and the matched transactions
// that followed it, in block order.
type FilteredBlock struct {
	Header wire.BlockHeader
	// Total is the number of transactions in the block, as proven by
	// the merkle block.
	Total uint32
	Txs   []*wire.MsgTx
	// Indexes are the positions of Txs in the block, as the merkle
	// block proves them.
	Indexes []uint32
}

// GetFilteredBlocks asks for the filtered blocks with the given hashes (at
// most MaxFilteredBlocksPerRequest), followed by a ping: btcd sends a
// merkle block and then its matched transactions, so the pong marks the
// end of the last block's transactions. Every merkle block must be for the
// block asked for at its position and prove its matches
// (bip37.VerifyMerkleBlock), and every matched transaction must follow it
// and not be 64 bytes without its witness (ErrAmbiguousBlock).
// A node without a loaded filter answers nothing but the pong: that is
// reported with ErrMissingBlocks. With an error of the answer, the blocks
// that came whole before it are returned too: they are not all that was
// asked, but the node sent them.
func (p *Peer) GetFilteredBlocks(ctx context.Context, hashes []chainhash.Hash) ([]FilteredBlock, error) {
	const op = "getdata filtered block"
	if len(hashes) == 0 {
		return nil, nil
	}
	end, err := p.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := p.needBloom(op); err != nil {
		return nil, err
	}
	if len(hashes) > MaxFilteredBlocksPerRequest {
		return nil, p.errorf(op, "peer: %d filtered blocks asked for, at most %d per request", len(hashes), MaxFilteredBlocksPerRequest)
	}
	req := wire.NewMsgGetDataSizeHint(uint(len(hashes)))
	for i := range hashes {
		req.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &hashes[i]))
	}
	deadline := p.deadline()
	if err := p.send(ctx, op, req, deadline); err != nil {
		return nil, err
	}
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return nil, err
	}
	index := make(map[chainhash.Hash]int, len(hashes))
	for i, h := range hashes {
		index[h] = i
	}
	blocks := make([]FilteredBlock, 0, len(hashes))
	var (
		pending map[chainhash.Hash]int // txid -> position in want
		want    []chainhash.Hash
		at      []uint32 // the positions of want in the block
		got     []*wire.MsgTx
		header  wire.BlockHeader
		total   uint32
	)
	// finish closes the current merkle block: all its matched
	// transactions must have come.
	finish := func() error {
		if want == nil {
			return nil
		}
		for i, tx := range got {
			if tx == nil {
				return p.fail(op, "%w: merkle block %v matched %d transactions, transaction %v never came",
					ErrMissingTransactions, hashes[len(blocks)], len(want), want[i])
			}
		}
		blocks = append(blocks, FilteredBlock{Header: header, Total: total, Txs: got, Indexes: at})
		want, at, got, pending = nil, nil, nil, nil
		return nil
	}
	// Unsolicited transactions (or duplicates) and other pongs are
	// dropped by recv.
	accept := func(m wire.Message) bool {
		switch m := m.(type) {
		case *wire.MsgMerkleBlock, *wire.MsgNotFound:
			return true
		case *wire.MsgTx:
			i, ok := pending[m.TxHash()]
			return ok && got[i] == nil
		case *wire.MsgPong:
			return m.Nonce == nonce
		}
		return false
	}
	for {
		m, err := p.recv(ctx, op, deadline, accept)
		if err != nil {
			return blocks, err
		}
		switch m := m.(type) {
		case *wire.MsgMerkleBlock:
			if err := finish(); err != nil {
				return blocks, err
			}
			i := len(blocks)
			if i >= len(hashes) {
				return blocks, p.fail(op, "%w: unrequested merkle block %v", ErrBadProof, m.Header.BlockHash())
			}
			if got := m.Header.BlockHash(); got != hashes[i] {
				if later, ok := index[got]; ok && later > i {
					return blocks, p.fail(op, "%w: skipped the merkle block of %v", ErrMissingBlocks, hashes[i])
				}
				return blocks, p.fail(op, "%w: merkle block for %v, expected %v", ErrBadProof, got, hashes[i])
			}
			matches, err := bip37.VerifyMerkleBlock(m)
			if err != nil {
				return blocks, p.fail(op, "%w: block %v: %v", ErrBadProof, hashes[i], err)
			}
			header, total = m.Header, m.Transactions
			want = make([]chainhash.Hash, len(matches))
			at = make([]uint32, len(matches))
			got = make([]*wire.MsgTx, len(matches))
			pending = make(map[chainhash.Hash]int, len(matches))
			for j, mm := range matches {
				want[j], at[j] = mm.Txid, mm.Index
				pending[mm.Txid] = j
			}
		case *wire.MsgTx:
			// A proof of a 64-byte transaction may be of an inner
			// node (CVE-2017-12842).
			if m.SerializeSizeStripped() == innerNodeSize {
				return blocks, p.fail(op, "%w: matched transaction %v of block %v", ErrAmbiguousBlock, m.TxHash(), hashes[len(blocks)])
			}
			got[pending[m.TxHash()]] = m
		case *wire.MsgNotFound:
			return blocks, p.fail(op, "%w: notfound for %d of the filtered blocks asked for (first %v)",
				ErrMissingBlocks, len(m.InvList), m.InvList[0].Hash)
		case *wire.MsgPong:
			if err := finish(); err != nil {
				return blocks, err
			}
			if n := len(blocks); n != len(hashes) {
				return blocks, p.fail(op, "%w: answered %d of %d filtered blocks, first missing %v (is a filter loaded?)",
					ErrMissingBlocks, n, len(hashes), hashes[n])
			}
			return blocks, nil
		}
	}
}

// LoadFilter loads f into the node (filterload). A node with a filter
// announces only matching transactions and answers filtered-block
// requests.
func (p *Peer) LoadFilter(ctx context.Context, f *bip37.Filter) error {
	return p.sendFilterMsg(ctx, "filterload", f.MsgFilterLoad())
}

// AddToFilter adds one element to the node's loaded filter (filteradd).
// Elements longer than bip37.MaxFilterAddDataSize are refused before
// sending: a node would disconnect.
func (p *Peer) AddToFilter(ctx context.Context, data []byte) error {
	if err := bip37.ValidateFilterAdd(data); err != nil {
		return fmt.Errorf("peer: %w", err)
	}
	return p.sendFilterMsg(ctx, "filteradd", wire.NewMsgFilterAdd(data))
}

// ClearFilter removes the node's filter (filterclear); the node then
// relays transactions unfiltered.
func (p *Peer) ClearFilter(ctx context.Context) error {
	return p.sendFilterMsg(ctx, "filterclear", wire.NewMsgFilterClear())
}

// sendFilterMsg sends one of the BIP 37 filter messages, refusing a node
// that does not offer the service.
func (p *Peer) sendFilterMsg(ctx context.Context, op string, msg wire.Message) error {
	end, err := p.begin(ctx, op)
	if err != nil {
		return err
	}
	defer end()
	if err := p.needBloom(op); err != nil {
		return err
	}
	return p.send(ctx, op, msg, p.deadline())
}

func (p *Peer) needBloom(op string) error {
	return p.need(op, wire.SFNodeBloom, "NODE_BLOOM (BIP 37 filtering)")
}
