package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
)

// filteredBatch is how many filtered blocks one getdata asks for.
const filteredBatch = 500

// WatchFilterHeadroom is how many matched outpoints per watch item
// NewWatchFilter leaves room for.
const WatchFilterHeadroom = 50

// NewWatchFilter returns a BIP 37 filter for a watch list of output
// scripts: it holds every data push of every script (a node matches an
// output when one of its pushes is in the filter) and uses
// BloomUpdateAll, so the node adds the outpoints of matched outputs and
// sends later spends of them. fpRate is the target false-positive rate; a
// script without data pushes cannot be watched with BIP 37 and is an error.
//
// The filter is sized for its elements plus WatchFilterHeadroom outpoints
// per watch item: the outpoints the update rules add would otherwise fill
// a filter sized for the scripts alone, and a full filter matches every
// transaction.
func NewWatchFilter(watch [][]byte, fpRate float64, tweak uint32) (*bip37.Filter, error) {
	var elems [][]byte
	for i, s := range watch {
		e := watchElements(s)
		if len(e) == 0 {
			return nil, fmt.Errorf("peer: watch item %d (script %x) has no data push a BIP 37 filter can match", i, s)
		}
		elems = append(elems, e...)
	}
	f := bip37.NewFilter(uint32(len(elems)+WatchFilterHeadroom*len(watch)), fpRate, tweak, wire.BloomUpdateAll)
	for _, e := range elems {
		f.Add(e)
	}
	return f, nil
}

// ScanBIP37 scans blocks from..to (inclusive) of chain with BIP 37: it
// loads f into the node, asks for filtered blocks and verifies each
// merkle proof against chain. Without a watch list every transaction the
// filter matches is reported; ScanBIP37Watch also checks them against a
// watch list. f itself is not changed.
func (p *Peer) ScanBIP37(ctx context.Context, chain *HeaderChain, f *bip37.Filter, from, to int32, progress func(done, total int)) (*ScanResult, error) {
	return p.ScanBIP37Watch(ctx, chain, f, nil, from, to, progress)
}

// ScanBIP37Watch is ScanBIP37 with a watch list of output scripts (as
// given to NewWatchFilter). Each transaction the node sends is checked
// locally: it is reported with the watch items it pays to or spends from,
// or marked FalsePositive when it involves none. Outputs paying to watch
// items are added to the local copy of the filter, and sent to the node
// with filteradd when its own update rules did not add them (a filter with
// BloomUpdateNone, say); the blocks after that one are then asked for
// again, so later spends are found in either case.
//
// Every merkle block must be for the requested block, hash to the verified
// header and prove its matches; every matched transaction must follow its
// merkle block. progress, if not nil, is called after each batch.
func (p *Peer) ScanBIP37Watch(ctx context.Context, chain *HeaderChain, f *bip37.Filter, watch [][]byte, from, to int32, progress func(done, total int)) (*ScanResult, error) {
	const op = "bip37 scan"
	if err := checkRange(chain, from, to); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, errors.New("peer: nil filter")
	}
	end, err := p.begin(op)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := p.need("filterload", wire.SFNodeBloom, "NODE_BLOOM (BIP 37 filtering)"); err != nil {
		return nil, err
	}
	startBytes := p.BytesReceived()
	res := &ScanResult{Matches: []Match{}, BlocksScanned: int(to-from) + 1}
	local := f.Clone()
	var wl *watchList
	if watch != nil {
		wl = newWatchList(watch)
	}
	if err := p.send(ctx, "filterload", local.MsgFilterLoad()); err != nil {
		return nil, err
	}
	// The filter stays loaded after the scan; LoadFilter and ClearFilter
	// change it.
	for start := from; start <= to; {
		stop := min(to, start+filteredBatch-1)
		blocks, err := p.filteredBlocks(ctx, chain, start, stop)
		if err != nil {
			return nil, err
		}
		res.MerkleBlocksReceived += len(blocks)
		next := stop + 1
	blockLoop:
		for i, fb := range blocks {
			h := start + int32(i)
			relevant, added := 0, false
			for _, tx := range fb.txs {
				// Mirror the node's update rules on our copy.
				local.MatchTxAndUpdate(tx)
				m := Match{Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: chain.Hash(h)}
				if wl != nil {
					m.WatchItems = wl.involve(tx)
					m.FalsePositive = len(m.WatchItems) == 0
					a, err := p.addFound(ctx, local, wl, tx)
					if err != nil {
						return nil, err
					}
					added = added || a
				}
				if !m.FalsePositive {
					relevant++
				}
				res.Matches = append(res.Matches, m)
			}
			if len(fb.txs) > 0 && relevant == 0 {
				res.FalsePositiveBlocks++
			}
			if added && h < stop {
				// The node filtered the rest of the batch without the
				// outpoints just sent: ask for it again.
				next = h + 1
				break blockLoop
			}
		}
		if progress != nil {
			progress(int(next-from), res.BlocksScanned)
		}
		start = next
	}
	res.BytesReceived = p.BytesReceived() - startBytes
	return res, nil
}

// addFound makes sure the filter, here and at the node, holds the
// outpoints of tx's outputs paying to watch items. With BloomUpdateAll
// both sides already added them; otherwise filteradd sends them.
func (p *Peer) addFound(ctx context.Context, local *bip37.Filter, wl *watchList, tx *wire.MsgTx) (added bool, err error) {
	txid := tx.TxHash()
	for i, out := range tx.TxOut {
		if _, ok := wl.byScript[string(out.PkScript)]; !ok {
			continue
		}
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if local.ContainsOutPoint(&op) {
			continue
		}
		local.AddOutPoint(&op)
		var b [chainhash.HashSize + 4]byte
		copy(b[:], txid[:])
		binary.LittleEndian.PutUint32(b[32:], op.Index)
		if err := p.send(ctx, "filteradd", wire.NewMsgFilterAdd(b[:])); err != nil {
			return false, err
		}
		added = true
	}
	return added, nil
}

// filteredBlock holds the matched transactions of a verified merkle block,
// in block order.
type filteredBlock struct {
	txs []*wire.MsgTx
}

// filteredBlocks asks for the filtered blocks start..stop, followed by a
// ping: btcd sends a merkle block and then its matched transactions, so the
// pong marks the end of the last block's transactions.
func (p *Peer) filteredBlocks(ctx context.Context, chain *HeaderChain, start, stop int32) ([]filteredBlock, error) {
	const op = "getdata filtered block"
	req := wire.NewMsgGetDataSizeHint(uint(stop - start + 1))
	for h := start; h <= stop; h++ {
		hash := chain.Hash(h)
		req.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &hash))
	}
	if err := p.send(ctx, op, req); err != nil {
		return nil, err
	}
	nonce := rand.Uint64()
	p.pingNonce.Store(nonce)
	if err := p.send(ctx, op, wire.NewMsgPing(nonce)); err != nil {
		return nil, err
	}
	blocks := make([]filteredBlock, 0, stop-start+1)
	var (
		pending map[chainhash.Hash]int // txid -> position in want
		want    []chainhash.Hash
		got     []*wire.MsgTx
	)
	// finish closes the current merkle block: all its matched
	// transactions must have come.
	finish := func() error {
		if want == nil {
			return nil
		}
		h := start + int32(len(blocks))
		for i, tx := range got {
			if tx == nil {
				return p.fail(op, "%w: merkle block %v (height %d) matched %d transactions, transaction %v never came",
					ErrMissingTransactions, chain.Hash(h), h, len(want), want[i])
			}
		}
		blocks = append(blocks, filteredBlock{txs: got})
		want, got, pending = nil, nil, nil
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
		m, err := p.recv(ctx, op, accept)
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *wire.MsgMerkleBlock:
			if err := finish(); err != nil {
				return nil, err
			}
			h := start + int32(len(blocks))
			if h > stop {
				return nil, p.fail(op, "%w: unrequested merkle block %v", ErrBadProof, m.Header.BlockHash())
			}
			if got := m.Header.BlockHash(); got != chain.Hash(h) {
				if later, ok := chain.HeightOf(got); ok && later > h && later <= stop {
					return nil, p.fail(op, "%w: skipped the merkle block of %v (height %d)", ErrMissingBlocks, chain.Hash(h), h)
				}
				return nil, p.fail(op, "%w: merkle block for %v, expected %v (height %d)", ErrBadProof, got, chain.Hash(h), h)
			}
			matches, err := bip37.VerifyMerkleBlock(m)
			if err != nil {
				return nil, p.fail(op, "%w: block %v (height %d): %v", ErrBadProof, chain.Hash(h), h, err)
			}
			want = make([]chainhash.Hash, len(matches))
			got = make([]*wire.MsgTx, len(matches))
			pending = make(map[chainhash.Hash]int, len(matches))
			for i, mm := range matches {
				want[i] = mm.Txid
				pending[mm.Txid] = i
			}
		case *wire.MsgTx:
			got[pending[m.TxHash()]] = m
		case *wire.MsgNotFound:
			return nil, p.fail(op, "%w: notfound for %d of the filtered blocks %d..%d", ErrMissingBlocks, len(m.InvList), start, stop)
		case *wire.MsgPong:
			if err := finish(); err != nil {
				return nil, err
			}
			if n := int32(len(blocks)); n != stop-start+1 {
				return nil, p.fail(op, "%w: answered %d of %d filtered blocks %d..%d (is a filter loaded?)",
					ErrMissingBlocks, n, stop-start+1, start, stop)
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
	end, err := p.begin(op)
	if err != nil {
		return err
	}
	defer end()
	if err := p.need(op, wire.SFNodeBloom, "NODE_BLOOM (BIP 37 filtering)"); err != nil {
		return err
	}
	return p.send(ctx, op, msg)
}
