package simulate

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Shape of the simulated chain's own transactions (its background).
const (
	// reuseShare is the share of the background's outputs that pay a
	// script seen before.
	reuseShare = 0.05
	// clustered chains: the mean age, in blocks, of the outputs a
	// transaction spends; the share of transactions that are batched
	// payouts, and their outputs; the busy scripts and their share of
	// the outputs.
	clusterAge     = 3
	batchShare     = 0.04
	batchMin       = 20
	batchMax       = 100
	busyScripts    = 20
	busyShare      = 0.1
	outputValue    = 10_000
	coinbaseValue  = 50 * btcutil.SatoshiPerBitcoin
	signatureBytes = 71
)

// blockEpoch is the time of the simulated chain's first block.
var blockEpoch = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

// signature is the placeholder signature of every simulated input: the
// attacks read keys and scripts, never signatures.
var signature = func() []byte {
	s := make([]byte, signatureBytes)
	s[0], s[1] = 0x30, signatureBytes-3
	for i := 2; i < len(s); i++ {
		s[i] = byte(i * 7)
	}
	s[len(s)-1] = byte(txscript.SigHashAll)
	return s
}()

// script is an output script of the chain and the key that spends it.
type script struct {
	pk   []byte // the output script, P2PKH or P2WPKH
	pub  []byte // the public key its spends reveal
	name string // its address: the universe line and index name
	// heights are the blocks it appears in (as an output or spent),
	// recorded only for the scripts the labels need.
	heights []int32
	track   bool
	// spends are the blocks an input spends it in, recorded as heights
	// are (the covered regime's profiles need them), and born the
	// transaction that first pays it, from 1 (0: not recorded).
	spends []int32
	born   int
}

// coin is an unspent output.
type coin struct {
	op     wire.OutPoint
	script uint32
}

// blockSink receives each block as it is made.
type blockSink func(h int32, b *wire.MsgBlock) error

// chainBuilder makes the chain's blocks, transaction by transaction: each
// input spends an earlier output and shows the key that spends it, as a
// real chain's do, so that package universe extracts the candidates (and
// the appearance index) from the blocks as it does from real ones.
type chainBuilder struct {
	rng       *rand.Rand
	clustered bool
	// trackAll records every script's heights, spends and first
	// transaction, and in txs every transaction: its block, the scripts
	// it spends and pays, and which transaction spends each output (the
	// covered regime draws covers from the background as chains of
	// transactions, each spending an output of the one before, as a
	// wallet's payments chain through its payers' change).
	trackAll bool
	txs      []txRecord
	outAt    map[wire.OutPoint][2]int // an output's transaction and index in txs
	perBlock int                      // background transactions per block
	scripts  []script
	// pool holds the background's unspent outputs, the newest last;
	// others every background script, busy the busy ones.
	pool   []coin
	others []uint32
	busy   []uint32
	h      int32
	block  []*wire.MsgTx
	prev   chainhash.Hash
	hashes []chainhash.Hash
	sink   blockSink
	err    error
}

func newChainBuilder(rng *rand.Rand, txsPerBlock int, clustered bool, sink blockSink) *chainBuilder {
	b := &chainBuilder{rng: rng, perBlock: txsPerBlock, clustered: clustered, sink: sink}
	if clustered {
		for range busyScripts {
			b.busy = append(b.busy, b.fakeScript())
		}
	}
	return b
}

// newScript registers the P2PKH or P2WPKH script of a public key.
func (b *chainBuilder) newScript(pub []byte, segwit bool) uint32 {
	h := btcutil.Hash160(pub)
	var pk []byte
	if segwit {
		pk = append([]byte{txscript.OP_0, txscript.OP_DATA_20}, h...)
	} else {
		pk = append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, h...), txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
	}
	b.scripts = append(b.scripts, script{pk: pk, pub: pub, name: addressOf(h, segwit)})
	return uint32(len(b.scripts) - 1)
}

// fakeScript registers a script of a key no one holds: 33 random bytes
// shaped as a compressed key (the attacks never check a key's point).
func (b *chainBuilder) fakeScript() uint32 {
	pub := make([]byte, 33)
	fillRandom(b.rng, pub)
	pub[0] = 2 | pub[0]&1
	return b.newScript(pub, b.rng.IntN(4) != 0)
}

// tracked registers a script whose heights the labels need.
func (b *chainBuilder) tracked(id uint32) uint32 {
	b.scripts[id].track = true
	return id
}

// appear records an appearance of a tracked script in the block being
// made.
func (b *chainBuilder) appear(id uint32) {
	s := &b.scripts[id]
	if (s.track || b.trackAll) && (len(s.heights) == 0 || s.heights[len(s.heights)-1] != b.h) {
		s.heights = append(s.heights, b.h)
	}
}

// spend records that an input of the block being made spends a
// script's output (when its heights are recorded).
func (b *chainBuilder) spend(id uint32) {
	s := &b.scripts[id]
	if (s.track || b.trackAll) && (len(s.spends) == 0 || s.spends[len(s.spends)-1] != b.h) {
		s.spends = append(s.spends, b.h)
	}
}

// tx adds a transaction spending ins and paying outs to the block being
// made and returns its outputs.
func (b *chainBuilder) tx(ins []coin, outs []uint32) []coin {
	tx := wire.NewMsgTx(2)
	for _, c := range ins {
		in := wire.NewTxIn(&c.op, nil, nil)
		s := &b.scripts[c.script]
		if len(s.pk) == 22 { // P2WPKH: the key in the witness
			in.Witness = wire.TxWitness{signature, s.pub}
		} else {
			sb := txscript.NewScriptBuilder().AddData(signature).AddData(s.pub)
			in.SignatureScript, _ = sb.Script()
		}
		tx.AddTxIn(in)
		b.appear(c.script)
		b.spend(c.script)
	}
	for _, id := range outs {
		tx.AddTxOut(wire.NewTxOut(outputValue, b.scripts[id].pk))
		b.appear(id)
	}
	b.block = append(b.block, tx)
	hash := tx.TxHash()
	if b.trackAll {
		b.record(ins, outs, hash)
	}
	coins := make([]coin, len(outs))
	for i, id := range outs {
		coins[i] = coin{op: wire.OutPoint{Hash: hash, Index: uint32(i)}, script: id}
	}
	return coins
}

// txRecord is a transaction as the covered regime's draw sees it.
type txRecord struct {
	h    int32
	ins  []uint32 // the scripts it spends
	outs []uint32 // the scripts it pays
	// spentBy holds, per output, the transaction that spends it, from
	// 1 (0: unspent).
	spentBy []int
}

// record adds a transaction of hash spending ins and paying outs to
// txs.
func (b *chainBuilder) record(ins []coin, outs []uint32, hash chainhash.Hash) {
	if b.outAt == nil {
		b.outAt = map[wire.OutPoint][2]int{}
	}
	r := txRecord{h: b.h, outs: outs, spentBy: make([]int, len(outs))}
	for _, c := range ins {
		r.ins = append(r.ins, c.script)
		if at, ok := b.outAt[c.op]; ok {
			b.txs[at[0]].spentBy[at[1]] = len(b.txs) + 1
			delete(b.outAt, c.op)
		}
	}
	b.txs = append(b.txs, r)
	for i, id := range outs {
		if b.scripts[id].born == 0 {
			b.scripts[id].born = len(b.txs)
		}
		b.outAt[wire.OutPoint{Hash: hash, Index: uint32(i)}] = [2]int{len(b.txs) - 1, i}
	}
}

// coinbase pays a new background script at the block's start.
func (b *chainBuilder) coinbase() {
	tx := wire.NewMsgTx(2)
	var extra [8]byte
	binary.LittleEndian.PutUint32(extra[:], uint32(b.h))
	binary.LittleEndian.PutUint32(extra[4:], b.rng.Uint32())
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), extra[:], nil))
	id := b.fakeScript()
	b.others = append(b.others, id)
	tx.AddTxOut(wire.NewTxOut(coinbaseValue, b.scripts[id].pk))
	b.block = append(b.block, tx)
	b.pool = append(b.pool, coin{op: wire.OutPoint{Hash: tx.TxHash()}, script: id})
}

// takeCoin spends an unspent background output: any of them, or in a
// clustered chain a recent one (of a mean age of a few blocks).
func (b *chainBuilder) takeCoin() (coin, bool) {
	if len(b.pool) == 0 {
		return coin{}, false
	}
	i := b.rng.IntN(len(b.pool))
	if b.clustered {
		perBlock := float64(2*b.perBlock + 1)
		back := int(math.Floor(-math.Log1p(-b.rng.Float64()) * clusterAge * perBlock))
		i = max(0, len(b.pool)-1-back)
	}
	c := b.pool[i]
	b.pool[i] = b.pool[len(b.pool)-1]
	b.pool = b.pool[:len(b.pool)-1]
	return c, true
}

// otherScript is a background output's script: new, or now and then one
// seen before (in a clustered chain also a busy one).
func (b *chainBuilder) otherScript() uint32 {
	if len(b.busy) > 0 && b.rng.Float64() < busyShare {
		return b.busy[b.rng.IntN(len(b.busy))]
	}
	if len(b.others) > 0 && b.rng.Float64() < reuseShare {
		return b.others[b.rng.IntN(len(b.others))]
	}
	id := b.fakeScript()
	b.others = append(b.others, id)
	return id
}

// payOthers adds a transaction spending ins to n background outputs,
// which join the pool.
func (b *chainBuilder) payOthers(ins []coin, n int) {
	outs := make([]uint32, n)
	for i := range outs {
		outs[i] = b.otherScript()
	}
	b.pool = append(b.pool, b.tx(ins, outs)...)
}

// background adds the block's own transactions: each spends one or two
// outputs and pays two (in a clustered chain, now and then a batch).
func (b *chainBuilder) background() {
	for range b.perBlock {
		var ins []coin
		for range 1 + b.rng.IntN(2) {
			if c, ok := b.takeCoin(); ok {
				ins = append(ins, c)
			}
		}
		n := 2
		if b.clustered && b.rng.Float64() < batchShare {
			n = batchMin + b.rng.IntN(batchMax-batchMin+1)
		}
		b.payOthers(ins, n)
	}
}

// funding is the input of a payment from outside the wallets: an
// unspent background output (none when there is none yet).
func (b *chainBuilder) funding() []coin {
	c, ok := b.takeCoin()
	if !ok {
		return nil
	}
	return []coin{c}
}

// startBlock begins the block at height h with its coinbase and
// background.
func (b *chainBuilder) startBlock(h int32) {
	b.h, b.block = h, nil
	b.coinbase()
	b.background()
}

// endBlock finishes the block being made and hands it to the sink.
func (b *chainBuilder) endBlock() {
	msg := &wire.MsgBlock{Header: wire.BlockHeader{Version: 4, PrevBlock: b.prev,
		Timestamp: blockEpoch.Add(time.Duration(b.h) * 10 * time.Minute), Bits: 0x207fffff, Nonce: uint32(b.h)}}
	hs := sha256.New()
	for _, tx := range b.block {
		id := tx.TxHash()
		hs.Write(id[:])
		_ = msg.AddTransaction(tx)
	}
	copy(msg.Header.MerkleRoot[:], hs.Sum(nil))
	b.prev = msg.Header.BlockHash()
	b.hashes = append(b.hashes, b.prev)
	if b.err == nil && b.sink != nil {
		b.err = b.sink(b.h, msg)
	}
	b.block = nil
}
