package neutrinobench

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// generatorVersion names the block layout the generator writes; it is
// part of the cache key, so a change of layout never reuses an old chain.
const generatorVersion = 1

// ChainSpec describes a generated regtest chain.
type ChainSpec struct {
	// Blocks is the height of the generated tip. At least 102: the
	// transactions that carry the filter elements and the payments
	// start at height 101, when the first coinbase matures.
	Blocks int
	// Elements is the number of distinct scripts each block's basic
	// filter holds (one or two more, with the funding script and any
	// planted payments): half are outputs created in the block, half the
	// scripts of the outputs of the previous block it spends, as in a
	// real chain where a filter holds both.
	Elements int
	// Watched is the number of watched scripts planted in the chain.
	Watched int
	// PaymentsPerScript is how many payments each watched script gets, in
	// pseudo-random blocks; the first of them is spent a few blocks later
	// (when that is still within the chain).
	PaymentsPerScript int
}

// DefaultSpec is the chain of the benchmarks: 2,000 blocks, 500 filter
// elements a block, 100 watched scripts paid twice each.
var DefaultSpec = ChainSpec{Blocks: 2000, Elements: 500, Watched: 100, PaymentsPerScript: 2}

func (s ChainSpec) validate() error {
	switch {
	case s.Blocks < firstSpendable+1:
		return fmt.Errorf("neutrinobench: %d blocks: need at least %d", s.Blocks, firstSpendable+1)
	case s.Elements < 4:
		return fmt.Errorf("neutrinobench: %d filter elements a block: need at least 4", s.Elements)
	case s.Watched < 1 || s.PaymentsPerScript < 1:
		return fmt.Errorf("neutrinobench: %d watched scripts with %d payments each: need at least one of each",
			s.Watched, s.PaymentsPerScript)
	}
	return nil
}

// key names the spec in the cache.
func (s ChainSpec) key() string {
	return fmt.Sprintf("chain-v%d-%db-%de-%dw-%dp", generatorVersion, s.Blocks, s.Elements, s.Watched, s.PaymentsPerScript)
}

// firstSpendable is the first height whose transactions can spend a
// coinbase (regtest coinbase maturity is 100).
const firstSpendable = 101

// paymentValue is the amount of every planted payment, in satoshis.
const paymentValue = 10_000

// WatchKey returns the key of watched script i; its P2PKH script is the
// watched script.
func WatchKey(i int) *peertest.Key { return peertest.NewKey("neutrinobench watch " + strconv.Itoa(i)) }

// WatchScripts returns the first n watched scripts.
func WatchScripts(n int) [][]byte { return pkScripts(n, WatchKey) }

// pkScripts returns the P2PKH scripts of key(0)..key(n-1).
func pkScripts(n int, key func(int) *peertest.Key) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = key(i).PkScript()
	}
	return out
}

// Planted is a transaction of the generated chain that involves watched
// scripts.
type Planted struct {
	// Txid is the transaction's id (RPC byte order when printed).
	Txid chainhash.Hash `json:"txid"`
	// Height is the block it is in.
	Height int32 `json:"height"`
	// Scripts are the indexes of the watched scripts it pays or spends.
	Scripts []int `json:"scripts"`
}

// Chain is a generated chain kept in the cache: its blocks and the
// transactions planted in them.
type Chain struct {
	Spec ChainSpec `json:"spec"`
	// Planted lists the transactions involving watched scripts, by height.
	Planted []Planted `json:"planted"`
	// Tip is the hash of the last generated block.
	Tip chainhash.Hash `json:"tip"`

	dir string // the cache entry
}

// Expected returns the txids of the transactions that involve one of the
// first w watched scripts.
func (c *Chain) Expected(w int) map[chainhash.Hash]bool {
	out := make(map[chainhash.Hash]bool)
	for _, p := range c.Planted {
		for _, s := range p.Scripts {
			if s < w {
				out[p.Txid] = true
			}
		}
	}
	return out
}

// The cache entry of a chain holds its manifest (the spec, the planted
// transactions and the tip) and its blocks, serialized one after another
// from height 1. btcd cannot keep a regtest chain: it deletes its regtest
// block database at every start (removeRegressionDB in btcd.go, v0.24.2),
// so the blocks are kept and replayed into each node (StartNodes).
const (
	manifestName = "chain.json"
	blocksName   = "blocks.dat"
)

// CachedChain returns the chain for spec, generating it first unless the
// user cache directory already holds it. Generation writes to a temporary
// entry that is renamed into place when complete, so an interrupted or
// concurrent generation never leaves a partial chain behind as a valid
// one. The blocks are checked by the btcd nodes they are replayed into.
func CachedChain(spec ChainSpec) (*Chain, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	root, err := os.UserCacheDir()
	if err != nil || root == "" {
		root = os.TempDir()
	}
	root = filepath.Join(root, "spvfilter-bench")
	dir := filepath.Join(root, spec.key())
	if c, err := loadChain(dir); err == nil {
		return c, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("neutrinobench: cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, spec.key()+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	c := &Chain{Spec: spec, dir: tmp}
	if err := c.generate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return nil, fmt.Errorf("neutrinobench: cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process finished the same chain first: use it.
		if c, lerr := loadChain(dir); lerr == nil {
			return c, nil
		}
		return nil, fmt.Errorf("neutrinobench: cache: %w", err)
	}
	c.dir = dir
	return c, nil
}

func loadChain(dir string) (*Chain, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	c := &Chain{dir: dir}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("neutrinobench: %s: %w", dir, err)
	}
	if len(c.Planted) == 0 {
		return nil, errors.New("neutrinobench: cached chain without planted transactions")
	}
	return c, nil
}

// anyoneCanSpend is the script of the funding outputs: OP_TRUE, spent with
// an empty signature script, so that the generator signs nothing but the
// spends of watched outputs.
var anyoneCanSpend = []byte{txscript.OP_TRUE}

// fillerScript returns the distinct, anyone-can-spend script of filler
// output i of height h: <20 bytes> OP_DROP OP_TRUE.
func fillerScript(h, i int) []byte {
	var seed [16]byte
	binary.LittleEndian.PutUint64(seed[:8], uint64(h))
	binary.LittleEndian.PutUint64(seed[8:], uint64(i))
	sum := sha256.Sum256(seed[:])
	s := make([]byte, 0, 23)
	s = append(s, txscript.OP_DATA_20)
	s = append(s, sum[:20]...)
	return append(s, txscript.OP_DROP, txscript.OP_TRUE)
}

// payment is a planted payment to watched script index script.
type payment struct {
	script int
	spend  bool // spent later in the chain
}

// plan returns the planted payments by height and the heights at which
// each spent payment is spent, both chosen pseudo-randomly from the spec
// alone so that the same spec always yields the same chain.
func (s ChainSpec) plan() (pays map[int][]payment, spendAt map[[2]int]int) {
	pays = make(map[int][]payment)
	spendAt = make(map[[2]int]int)
	span := s.Blocks - firstSpendable // heights firstSpendable+1 .. Blocks
	for w := 0; w < s.Watched; w++ {
		for j := 0; j < s.PaymentsPerScript; j++ {
			sum := sha256.Sum256([]byte(fmt.Sprintf("neutrinobench plan %d %d", w, j)))
			r := binary.LittleEndian.Uint64(sum[:8])
			h := firstSpendable + 1 + int(r%uint64(span))
			spend := false
			if j == 0 {
				at := h + 1 + int(binary.LittleEndian.Uint64(sum[8:16])%50)
				if at <= s.Blocks {
					spendAt[[2]int{w, h}] = at
					spend = true
				}
			}
			pays[h] = append(pays[h], payment{script: w, spend: spend})
		}
	}
	return pays, spendAt
}

// generate builds the chain's blocks and writes them to the entry: each
// holds a coinbase, one transaction that spends the previous block's filler
// outputs and creates new ones (and carries the block's planted payments),
// and the spends of earlier planted payments. Blocks before the first
// coinbase matures carry their filler outputs in the coinbase.
func (c *Chain) generate() error {
	params := &chaincfg.RegressionNetParams
	spec := c.Spec
	pays, spendAt := spec.plan()
	fillers := spec.Elements / 2

	f, err := os.Create(filepath.Join(c.dir, blocksName))
	if err != nil {
		return fmt.Errorf("neutrinobench: cache: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)

	type spendable struct {
		out    wire.OutPoint
		value  int64
		script int
	}
	spendsAt := make(map[int][]spendable) // height -> payments spent there
	planted := make(map[chainhash.Hash]*Planted)

	prev := *params.GenesisHash
	prevTime := params.GenesisBlock.Header.Timestamp
	var coinbase1 wire.OutPoint // funds the first filler transaction
	var change wire.OutPoint    // the previous filler transaction's change
	var changeValue int64
	var lastFillers []wire.OutPoint
	for h := 1; h <= spec.Blocks; h++ {
		cb := coinbaseTx(h, blockchain.CalcBlockSubsidy(int32(h), params))
		if h < firstSpendable {
			for i := 0; i < spec.Elements-1; i++ {
				cb.AddTxOut(wire.NewTxOut(0, fillerScript(h, i)))
			}
		}
		txs := []*wire.MsgTx{cb}
		if h == 1 {
			coinbase1 = wire.OutPoint{Hash: cb.TxHash(), Index: 0}
		}
		if h >= firstSpendable {
			tx := wire.NewMsgTx(wire.TxVersion)
			in, value := change, changeValue
			if h == firstSpendable {
				in, value = coinbase1, blockchain.CalcBlockSubsidy(1, params)
			}
			tx.AddTxIn(wire.NewTxIn(&in, nil, nil))
			for i := range lastFillers {
				tx.AddTxIn(wire.NewTxIn(&lastFillers[i], nil, nil))
			}
			lastFillers = lastFillers[:0]
			for i := 0; i < fillers; i++ {
				tx.AddTxOut(wire.NewTxOut(0, fillerScript(h, i)))
			}
			var scripts []int
			var toSpend []spendable
			for _, p := range pays[h] {
				idx := uint32(len(tx.TxOut))
				tx.AddTxOut(wire.NewTxOut(paymentValue, WatchKey(p.script).PkScript()))
				value -= paymentValue
				scripts = append(scripts, p.script)
				if p.spend {
					toSpend = append(toSpend, spendable{out: wire.OutPoint{Index: idx}, value: paymentValue, script: p.script})
				}
			}
			if value < 0 {
				return errors.New("neutrinobench: the funding output ran dry")
			}
			changeIdx := uint32(len(tx.TxOut))
			tx.AddTxOut(wire.NewTxOut(value, anyoneCanSpend))
			txid := tx.TxHash()
			for i := 0; i < fillers; i++ {
				lastFillers = append(lastFillers, wire.OutPoint{Hash: txid, Index: uint32(i)})
			}
			change, changeValue = wire.OutPoint{Hash: txid, Index: changeIdx}, value
			for _, s := range toSpend {
				s.out.Hash = txid
				at := spendAt[[2]int{s.script, h}]
				spendsAt[at] = append(spendsAt[at], s)
			}
			if len(scripts) > 0 {
				planted[txid] = &Planted{Txid: txid, Height: int32(h), Scripts: scripts}
			}
			txs = append(txs, tx)
			for _, s := range spendsAt[h] {
				sp, err := spendTx(s.out, s.value, WatchKey(s.script))
				if err != nil {
					return err
				}
				txs = append(txs, sp)
				planted[sp.TxHash()] = &Planted{Txid: sp.TxHash(), Height: int32(h), Scripts: []int{s.script}}
			}
			delete(spendsAt, h)
		}
		prevTime = prevTime.Add(10 * time.Minute)
		block, err := peertest.SolveBlock(params, prev, prevTime, txs)
		if err != nil {
			return fmt.Errorf("neutrinobench: %w", err)
		}
		if err := block.Serialize(w); err != nil {
			return fmt.Errorf("neutrinobench: cache: %w", err)
		}
		prev = block.BlockHash()
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("neutrinobench: cache: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("neutrinobench: cache: %w", err)
	}
	c.Tip = prev
	for _, p := range planted {
		c.Planted = append(c.Planted, *p)
	}
	sort.Slice(c.Planted, func(i, j int) bool {
		a, b := c.Planted[i], c.Planted[j]
		if a.Height != b.Height {
			return a.Height < b.Height
		}
		return a.Txid.String() < b.Txid.String()
	})
	return nil
}

// replay submits the chain's blocks to node, in order.
func (c *Chain) replay(node *peertest.Node) error {
	f, err := os.Open(filepath.Join(c.dir, blocksName))
	if err != nil {
		return fmt.Errorf("neutrinobench: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for h := 1; h <= c.Spec.Blocks; h++ {
		var b wire.MsgBlock
		if err := b.Deserialize(r); err != nil {
			return fmt.Errorf("neutrinobench: cached block %d in %s (remove it to generate it anew): %w", h, c.dir, err)
		}
		if err := node.RPC().SubmitBlock(btcutil.NewBlock(&b), nil); err != nil {
			return fmt.Errorf("neutrinobench: submitblock of cached block %d from %s: %w", h, c.dir, err)
		}
	}
	best, err := node.RPC().GetBestBlockHash()
	if err != nil {
		return fmt.Errorf("neutrinobench: getbestblockhash: %w", err)
	}
	if *best != c.Tip {
		return fmt.Errorf("neutrinobench: node's best block is %v after the replay, the chain's tip %v", best, c.Tip)
	}
	return nil
}

// coinbaseTx returns the coinbase of height h paying subsidy to OP_TRUE;
// the height in its signature script keeps every coinbase distinct.
func coinbaseTx(h int, subsidy int64) *wire.MsgTx {
	sig, _ := txscript.NewScriptBuilder().AddInt64(int64(h)).AddData([]byte("neutrinobench")).Script()
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), sig, nil))
	tx.AddTxOut(wire.NewTxOut(subsidy, anyoneCanSpend))
	return tx
}

// spendTx spends the P2PKH output out of key back to OP_TRUE.
func spendTx(out wire.OutPoint, value int64, key *peertest.Key) (*wire.MsgTx, error) {
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&out, nil, nil))
	tx.AddTxOut(wire.NewTxOut(value, anyoneCanSpend))
	sig, err := txscript.SignatureScript(tx, 0, key.PkScript(), txscript.SigHashAll, key.Priv, true)
	if err != nil {
		return nil, fmt.Errorf("neutrinobench: signing a spend: %w", err)
	}
	tx.TxIn[0].SignatureScript = sig
	return tx, nil
}
