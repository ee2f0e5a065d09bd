package neutrinobench

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// followKey returns the key of watched script i of the follow benchmark;
// its P2PKH script is the watched script. The keys differ from WatchKey's,
// so the generated chain below the followed blocks pays none of them.
func followKey(i int) *peertest.Key {
	return peertest.NewKey("neutrinobench follow " + strconv.Itoa(i))
}

// followScripts returns the first n watched scripts of the follow
// benchmark.
func followScripts(n int) [][]byte { return pkScripts(n, followKey) }

// miner extends the chain a node serves with blocks it builds itself, as
// the generator builds its blocks (see Chain), dated now: a coinbase, a
// transaction that spends the previous block's filler outputs and creates
// new ones, so that every filter holds about Elements scripts, the
// payments to watched scripts asked for, and the spends of earlier ones.
// It submits each block to the node, which relays it to its peers.
type miner struct {
	node   *peertest.Node
	params *chaincfg.Params
	// fillers is the number of filler outputs of each block.
	fillers int

	height int32
	tip    chainhash.Hash
	times  []time.Time // timestamps of the last blocks, up to medianBlocks, oldest first

	change      wire.OutPoint // funds the next filler transaction
	changeValue int64
	spendable   []wire.OutPoint // filler outputs the next block spends
}

// medianBlocks is how many blocks' timestamps the median time past is
// taken over (btcd's medianTimeBlocks).
const medianBlocks = 11

// fundingHeight is the generated block whose coinbase funds the miner: the
// generator never spends it (it funds itself from the coinbase of block 1
// and its own change), nor the filler outputs it carries.
const fundingHeight = 2

// newMiner prepares a miner on node's chain, whose tip must be above
// the generated chain's first spendable height; elements is the number
// of scripts each block's filter is to hold.
func newMiner(node *peertest.Node, elements int) (*miner, error) {
	rpc := node.RPC()
	tip, height, err := rpc.GetBestBlock()
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: getbestblock: %w", err)
	}
	if height <= firstSpendable {
		return nil, fmt.Errorf("neutrinobench: a chain of %d blocks: the miner needs a mature coinbase", height)
	}
	m := &miner{node: node, params: node.Params, fillers: elements / 2, height: height, tip: *tip}
	for hash, i := *tip, 0; i < medianBlocks; i++ {
		hdr, err := rpc.GetBlockHeader(&hash)
		if err != nil {
			return nil, fmt.Errorf("neutrinobench: getblockheader %v: %w", hash, err)
		}
		m.times = append(m.times, hdr.Timestamp)
		hash = hdr.PrevBlock
	}
	slices.Reverse(m.times)
	hash, err := rpc.GetBlockHash(fundingHeight)
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: getblockhash %d: %w", fundingHeight, err)
	}
	block, err := rpc.GetBlock(hash)
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: getblock %v: %w", hash, err)
	}
	cb := block.Transactions[0]
	if len(cb.TxOut) == 0 || string(cb.TxOut[0].PkScript) != string(anyoneCanSpend) {
		return nil, fmt.Errorf("neutrinobench: the coinbase of block %d is not the generator's", fundingHeight)
	}
	txid := cb.TxHash()
	m.change, m.changeValue = wire.OutPoint{Hash: txid, Index: 0}, cb.TxOut[0].Value
	for i := 1; i < len(cb.TxOut) && len(m.spendable) < m.fillers; i++ {
		m.spendable = append(m.spendable, wire.OutPoint{Hash: txid, Index: uint32(i)})
	}
	return m, nil
}

// paid is a payment to a watched script that a later block may spend.
type paid struct {
	out    wire.OutPoint
	script int
}

// mined is what one block of the miner holds for the watchers.
type mined struct {
	hash chainhash.Hash
	// planted are the payments and spends of watched scripts, in block
	// order; paidOut the payments.
	planted []chainhash.Hash
	paidOut []paid
}

// mine builds the next block, paying watched script indexes pay and
// spending spend, submits it and returns it.
func (m *miner) mine(pay []int, spend []paid) (*mined, error) {
	h := m.height + 1
	fill := wire.NewMsgTx(wire.TxVersion)
	fill.AddTxIn(wire.NewTxIn(&m.change, nil, nil))
	for i := range m.spendable {
		fill.AddTxIn(wire.NewTxIn(&m.spendable[i], nil, nil))
	}
	for i := 0; i < m.fillers; i++ {
		fill.AddTxOut(wire.NewTxOut(0, fillerScript(int(h), i)))
	}
	value := m.changeValue
	for _, w := range pay {
		fill.AddTxOut(wire.NewTxOut(paymentValue, followKey(w).PkScript()))
		value -= paymentValue
	}
	if value < 0 {
		return nil, errors.New("neutrinobench: the miner's funds ran dry")
	}
	fill.AddTxOut(wire.NewTxOut(value, anyoneCanSpend))
	txs := []*wire.MsgTx{coinbaseTx(int(h), blockchain.CalcBlockSubsidy(h, m.params)), fill}
	fillID := fill.TxHash()
	b := &mined{}
	if len(pay) > 0 {
		b.planted = append(b.planted, fillID)
	}
	for i, w := range pay {
		b.paidOut = append(b.paidOut, paid{out: wire.OutPoint{Hash: fillID, Index: uint32(m.fillers + i)}, script: w})
	}
	for _, p := range spend {
		tx, err := spendTx(p.out, paymentValue, followKey(p.script))
		if err != nil {
			return nil, err
		}
		txs = append(txs, tx)
		b.planted = append(b.planted, tx.TxHash())
	}
	block, err := peertest.SolveBlock(m.params, m.tip, m.nextTime(), txs)
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: %w", err)
	}
	if err := m.node.RPC().SubmitBlock(btcutil.NewBlock(block), nil); err != nil {
		return nil, fmt.Errorf("neutrinobench: submitblock at height %d: %w", h, err)
	}
	b.hash = block.BlockHash()
	m.height, m.tip = h, b.hash
	m.times = append(m.times, block.Header.Timestamp)
	if len(m.times) > medianBlocks {
		m.times = m.times[1:]
	}
	m.change, m.changeValue = wire.OutPoint{Hash: fillID, Index: uint32(len(fill.TxOut) - 1)}, value
	m.spendable = m.spendable[:0]
	for i := 0; i < m.fillers; i++ {
		m.spendable = append(m.spendable, wire.OutPoint{Hash: fillID, Index: uint32(i)})
	}
	return b, nil
}

// nextTime is the timestamp of the next block: now, or a second after the
// median time past if now is not after it (blocks mined faster than one a
// second run ahead of the clock, slowly: the median moves half as fast as
// the blocks).
func (m *miner) nextTime() time.Time {
	sorted := slices.Clone(m.times)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	median := sorted[len(sorted)/2]
	now := time.Unix(time.Now().Unix(), 0)
	if now.After(median) {
		return now
	}
	return median.Add(time.Second)
}

// followPlan says how a round of the follow benchmark mines.
type followPlan struct {
	// Blocks is the number of blocks mined.
	Blocks int
	// Batch blocks are mined back to back, every Interval.
	Batch    int
	Interval time.Duration
	// Watched is the number of watched scripts; PayEvery is how many
	// blocks apart they are paid (each in turn), every other payment
	// being spent SpendAfter blocks later when that is within the round.
	Watched    int
	PayEvery   int
	SpendAfter int
}

// minedRound is what a round mined.
type minedRound struct {
	// Start is the height of the tip before the round, Final after it.
	Start, Final int32
	// Hashes and Submitted are the blocks Start+1..Final and when the
	// node accepted each.
	Hashes    []chainhash.Hash
	Submitted []time.Time
	// Planted are the transactions paying or spending watched scripts,
	// with the heights of their blocks.
	Planted map[chainhash.Hash]int32
}

// round mines plan's blocks, in batches, and returns them.
func (m *miner) round(plan followPlan) (*minedRound, error) {
	r := &minedRound{Start: m.height, Final: m.height + int32(plan.Blocks), Planted: make(map[chainhash.Hash]int32)}
	due := make(map[int][]paid) // block index in the round -> payments it spends
	begin := time.Now()
	for i := 1; i <= plan.Blocks; i++ {
		var pay []int
		k := i / plan.PayEvery
		if i%plan.PayEvery == 0 {
			pay = []int{k % plan.Watched}
		}
		b, err := m.mine(pay, due[i])
		if err != nil {
			return r, err
		}
		delete(due, i)
		r.Hashes = append(r.Hashes, b.hash)
		r.Submitted = append(r.Submitted, time.Now())
		for _, txid := range b.planted {
			r.Planted[txid] = m.height
		}
		if at := i + plan.SpendAfter; k%2 == 0 && at <= plan.Blocks {
			due[at] = append(due[at], b.paidOut...)
		}
		if i%plan.Batch == 0 && i < plan.Blocks {
			time.Sleep(time.Until(begin.Add(time.Duration(i/plan.Batch) * plan.Interval)))
		}
	}
	return r, nil
}
