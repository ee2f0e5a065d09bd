package leak_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// testChain is a small chain of P2WPKH payments with a wallet among
// them, its blocks' BIP 158 filters, and a client's scan of it over
// three peers: what Compute is given.
type testChain struct {
	params  *chaincfg.Params
	blocks  []*wire.MsgBlock
	filters [][]byte
	keys    [][16]byte
	watched [][]byte
	covers  [][]byte
	views   []leak.View
	tip     int32
}

// coin is an unspent output of the test chain.
type coin struct {
	op     wire.OutPoint
	pub    []byte
	script []byte
}

// chainSpec shapes a test chain.
type chainSpec struct {
	blocks, txs, wallet, covers int
	seed                        uint64
}

// newTestChain builds a chain: each block a coinbase and spec.txs
// payments, each spending a recent coin to a payee and change; each of
// the wallet's keys is paid 1.5 times on average (and spent when its coin
// is among the newest), and so is each cover's (another key the client
// fetches as its own). The client fetched
// every block holding a wallet or cover script, from three peers in turn;
// peer 0 scanned the first half, peer 1 the second, peer 2 no range.
func newTestChain(t testing.TB, spec chainSpec) *testChain {
	t.Helper()
	rng := rand.New(rand.NewPCG(spec.seed, 77))
	params := &chaincfg.RegressionNetParams
	key := func() ([]byte, []byte) {
		pub := make([]byte, 33)
		pub[0] = 2
		for i := 1; i < 33; i++ {
			pub[i] = byte(rng.Uint32())
		}
		a, err := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(pub), params)
		if err != nil {
			t.Fatal(err)
		}
		s, err := txscript.PayToAddrScript(a)
		if err != nil {
			t.Fatal(err)
		}
		return pub, s
	}
	type ownKey struct{ pub, script []byte }
	var wallet, covers []ownKey
	for range spec.wallet {
		p, s := key()
		wallet = append(wallet, ownKey{p, s})
	}
	for range spec.covers {
		p, s := key()
		covers = append(covers, ownKey{p, s})
	}
	c := &testChain{params: params, tip: int32(spec.blocks - 1)}
	for _, k := range wallet {
		c.watched = append(c.watched, k.script)
	}
	for _, k := range covers {
		c.covers = append(c.covers, k.script)
	}
	var coins []coin
	prev := chainhash.Hash{}
	for h := range spec.blocks {
		b := &wire.MsgBlock{Header: wire.BlockHeader{PrevBlock: prev, Nonce: uint32(h)}}
		cb := wire.NewMsgTx(1)
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{byte(h), byte(h >> 8), 1}})
		pub, s := key()
		cb.AddTxOut(wire.NewTxOut(50, s))
		b.Transactions = append(b.Transactions, cb)
		var prevScripts [][]byte
		var made []coin
		made = append(made, coin{wire.OutPoint{Hash: cb.TxHash(), Index: 0}, pub, s})
		for range spec.txs {
			if len(coins) == 0 {
				break
			}
			// Spend one of the newest coins: outputs spent soon cluster.
			i := len(coins) - 1 - rng.IntN(min(len(coins), 40))
			in := coins[i]
			coins = slices.Delete(coins, i, i+1)
			tx := wire.NewMsgTx(2)
			tx.AddTxIn(&wire.TxIn{PreviousOutPoint: in.op, Witness: wire.TxWitness{make([]byte, 71), in.pub}})
			prevScripts = append(prevScripts, in.script)
			var payee ownKey
			switch r := rng.Float64() * float64(spec.blocks*spec.txs) / 1.5; {
			case r < float64(len(wallet)):
				payee = wallet[int(r)]
			case r < float64(len(wallet)+len(covers)):
				payee = covers[int(r)-len(wallet)]
			default:
				payee.pub, payee.script = key()
			}
			cp, cs := key()
			tx.AddTxOut(wire.NewTxOut(1, payee.script))
			tx.AddTxOut(wire.NewTxOut(1, cs))
			b.Transactions = append(b.Transactions, tx)
			made = append(made, coin{wire.OutPoint{Hash: tx.TxHash(), Index: 0}, payee.pub, payee.script},
				coin{wire.OutPoint{Hash: tx.TxHash(), Index: 1}, cp, cs})
		}
		coins = append(coins, made...)
		f, err := gcs.BuildBasic(b, prevScripts)
		if err != nil {
			t.Fatal(err)
		}
		hash := b.BlockHash()
		c.blocks = append(c.blocks, b)
		c.filters = append(c.filters, f.NBytes())
		c.keys = append(c.keys, gcs.BasicKey(&hash))
		prev = hash
	}
	c.views = []leak.View{
		{ID: "127.0.0.1:1", Scanned: []leak.HeightRange{{From: 0, To: c.tip / 2}}},
		{ID: "127.0.0.1:2", Scanned: []leak.HeightRange{{From: c.tip/2 + 1, To: c.tip}}},
		{ID: "127.0.0.1:3"},
	}
	// The blocks of the own scripts are fetched as a client spreading its
	// fetches does: three in five from the peer that gave their filters, one
	// from the filterless peer and one from the other (outside its
	// range: it takes the client to have scanned the whole chain).
	own := append(slices.Clone(c.watched), c.covers...)
	n := 0
	for h := range c.blocks {
		f, _ := gcs.DecodeBasic(c.filters[h])
		if f.MatchAny(c.keys[h], own) {
			ranged := 0
			if int32(h) > c.tip/2 {
				ranged = 1
			}
			v := &c.views[[]int{ranged, ranged, ranged, 2, 1 - ranged}[n%5]]
			v.Fetched = append(v.Fetched, int32(h))
			n++
		}
	}
	return c
}

// input is what Compute is given, with the filters of held heights.
func (c *testChain) input(held func(h int32) bool) leak.Input {
	return leak.Input{Params: c.params, Views: c.views, Tip: c.tip, Watched: c.watched, Covers: c.covers, Seed: 1,
		Blocks: c.block, Filters: heldFilters{c, held}}
}

// block gives a block of the chain.
func (c *testChain) block(h int32) (*wire.MsgBlock, bool) {
	if h < 0 || int(h) >= len(c.blocks) {
		return nil, false
	}
	return c.blocks[h], true
}

type heldFilters struct {
	c    *testChain
	held func(h int32) bool
}

func (f heldFilters) Filter(h int32) ([]byte, [16]byte, bool) {
	if h < 0 || int(h) >= len(f.c.blocks) || f.held != nil && !f.held(h) {
		return nil, [16]byte{}, false
	}
	return f.c.filters[h], f.c.keys[h], true
}

// index is the chain's full appearance index, as privacy universe
// --index writes it.
func (c *testChain) index(t testing.TB) []byte {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	hd := &universe.IndexHeader{Network: c.params.Name}
	for h, b := range c.blocks {
		universe.Appearances(b, c.params, func(a universe.Appearance) { ix.AddTx(a.Candidate, int32(h), a.Tx) })
		hd.Hashes = append(hd.Hashes, b.BlockHash())
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
