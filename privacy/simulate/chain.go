package simulate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// maxChainTxs bounds a chain's transactions, and so its scripts.
const maxChainTxs = 2_000_000

// Shape of the simulated chain.
const (
	// bip158M is BIP 158's false-positive parameter M: a block's basic
	// filter matches an item it lacks with probability 1/M.
	bip158M = 784931
	// reuseShare is the share of the chain's outputs that pay a script
	// seen before, and of the payments to a wallet that pay one of its
	// scripts again.
	reuseShare       = 0.05
	walletReuseShare = 0.2
	// spendShare is the share of the wallet's received scripts it spends
	// later, and of the payers' last change outputs spent later.
	spendShare = 0.5
	// BIP 157 batch sizes: filter headers and filters asked per message,
	// and the blocks of one getdata as a client sends them.
	cfHeadersBatch = 2000
	cfiltersBatch  = 1000
	getDataBatch   = 16
)

// chainSim is the simulated chain: every script's appearances, the
// wallets' and sessions' labels, and the sessions' downloads.
type chainSim struct {
	seed   uint64
	opts   FetchOptions
	rng    *rand.Rand
	names  []string // by script id
	apps   []scriptApp
	pool   []uint32 // unspent outputs of the chain's own transactions
	others []uint32 // every script of the chain's own transactions
	hashes []chainhash.Hash
	events map[int32][]chainEvent
	// tx is the position, in the block being made, of the transaction
	// being made (0: the coinbase).
	tx int32

	wallets  []*fetchWalletSim
	sessions []*FetchSession
	labels   *FetchLabels
}

// scriptApp is one appearance of a script: in the transaction at
// position tx of the block at height.
type scriptApp struct {
	id     uint32
	height int32
	tx     int32
}

type eventKind int

const (
	evPayment eventKind = iota
	evWalletSpend
	evPayerSpend
)

type chainEvent struct {
	kind    eventKind
	wallet  int
	payer   int
	last    bool // the payer's last payment to the wallet
	script  uint32
	payment int
}

type fetchWalletSim struct {
	label   FetchWallet
	scripts []uint32
	change  []int64 // each payer's unspent change output, -1 before its first payment
}

// simulateChain runs the chain of the block-download attack (see the
// package documentation).
func simulateChain(seed uint64, o FetchOptions) (*chainSim, error) {
	if int64(o.Blocks)*int64(o.TxsPerBlock+2) > maxChainTxs {
		return nil, firstFailed([]optionCheck{{false, "fetch.block_count", o.Blocks, fmt.Sprintf("blocks of %d transactions: more than %d in all", o.TxsPerBlock, maxChainTxs)}})
	}
	c := &chainSim{seed: seed, opts: o, rng: newRand(seed, streamChain), events: map[int32][]chainEvent{}}
	seen := map[chainhash.Hash]bool{}
	for len(c.hashes) < o.Blocks {
		var h chainhash.Hash
		fillRandom(c.rng, h[:])
		if !seen[h] {
			seen[h] = true
			c.hashes = append(c.hashes, h)
		}
	}
	c.scheduleWallets()
	for h := range int32(o.Blocks) {
		c.block(h)
	}
	c.makeLabels()
	return c, nil
}

// newScript makes a new script and records its first appearance.
func (c *chainSim) newScript(h int32) uint32 {
	var b [24]byte
	fillRandom(c.rng, b[:])
	id := uint32(len(c.names))
	c.names = append(c.names, addressOf(b[:20], b[20]%4 != 0))
	c.appear(id, h)
	return id
}

// appear records an appearance of script id, at h in the transaction
// being made.
func (c *chainSim) appear(id uint32, h int32) { c.apps = append(c.apps, scriptApp{id, h, c.tx}) }

// takeUnspent spends a random unspent output of the chain's own
// transactions at h, if there is one.
func (c *chainSim) takeUnspent(h int32) (uint32, bool) {
	if len(c.pool) == 0 {
		return 0, false
	}
	i := c.rng.IntN(len(c.pool))
	id := c.pool[i]
	c.pool[i] = c.pool[len(c.pool)-1]
	c.pool = c.pool[:len(c.pool)-1]
	c.appear(id, h)
	return id, true
}

// otherOutput pays, at h, a new script or now and then one seen before.
func (c *chainSim) otherOutput(h int32) {
	var id uint32
	if len(c.others) > 0 && c.rng.Float64() < reuseShare {
		id = c.others[c.rng.IntN(len(c.others))]
		c.appear(id, h)
	} else {
		id = c.newScript(h)
		c.others = append(c.others, id)
	}
	c.pool = append(c.pool, id)
}

// scheduleWallets draws each wallet's birthday and payments: each payment
// comes from one of its payers, who spends the change of the previous one.
func (c *chainSim) scheduleWallets() {
	o := c.opts
	for i := range o.Wallets {
		w := &fetchWalletSim{label: FetchWallet{ID: walletID("f", i, o.Wallets),
			Birth: int32(c.rng.IntN(o.Blocks / 4)), Scripts: []string{}, PayerChange: []string{}, Payees: []string{}}}
		payers := uniformInt(c.rng, o.Payers)
		w.change = slices.Repeat([]int64{-1}, payers)
		heights := make([]int32, uniformInt(c.rng, o.Payments))
		for j := range heights {
			heights[j] = w.label.Birth + int32(c.rng.IntN(o.Blocks-int(w.label.Birth)))
		}
		slices.Sort(heights)
		last := map[int]int{}
		by := make([]int, len(heights))
		for j := range heights {
			by[j] = c.rng.IntN(payers)
			last[by[j]] = j
		}
		for j, h := range heights {
			c.events[h] = append(c.events[h], chainEvent{kind: evPayment, wallet: i, payer: by[j], last: last[by[j]] == j, payment: j})
		}
		c.wallets = append(c.wallets, w)
	}
}

// later returns a random height after h, or false at the tip.
func (c *chainSim) later(h int32) (int32, bool) {
	tip := int32(c.opts.Blocks - 1)
	if h >= tip {
		return 0, false
	}
	return h + 1 + int32(c.rng.IntN(int(tip-h))), true
}

// block makes the block at h: a coinbase, the chain's own transactions
// (each spending one or two outputs and making two), then the wallets'.
func (c *chainSim) block(h int32) {
	c.tx = 0
	c.pool = append(c.pool, c.newScript(h))
	for range c.opts.TxsPerBlock {
		c.tx++
		for range 1 + c.rng.IntN(2) {
			c.takeUnspent(h)
		}
		c.otherOutput(h)
		c.otherOutput(h)
	}
	for _, e := range c.events[h] {
		c.tx++ // each event is one transaction
		switch e.kind {
		case evPayment:
			c.payment(h, e)
		case evWalletSpend:
			c.walletSpend(h, e)
		case evPayerSpend:
			c.appear(e.script, h)
			c.otherOutput(h)
		}
	}
	delete(c.events, h)
}

// payment is a payer's transaction to wallet e.wallet at h: it spends the
// payer's last change (or an output of the chain), pays the wallet, and
// makes the payer's new change beside the payment.
func (c *chainSim) payment(h int32, e chainEvent) {
	w := c.wallets[e.wallet]
	if prev := w.change[e.payer]; prev >= 0 {
		c.appear(uint32(prev), h)
	} else {
		c.takeUnspent(h)
	}
	var got uint32
	if len(w.scripts) > 0 && c.rng.Float64() < walletReuseShare {
		got = w.scripts[c.rng.IntN(len(w.scripts))]
		c.appear(got, h)
	} else {
		got = c.walletScript(w, h)
	}
	change := c.newScript(h)
	w.change[e.payer] = int64(change)
	w.label.PayerChange = append(w.label.PayerChange, c.names[change])
	if e.last && c.rng.Float64() < spendShare {
		if at, ok := c.later(h); ok {
			c.events[at] = append(c.events[at], chainEvent{kind: evPayerSpend, script: change})
		}
	}
	if c.rng.Float64() < spendShare {
		if at, ok := c.later(h); ok {
			c.events[at] = append(c.events[at], chainEvent{kind: evWalletSpend, wallet: e.wallet, script: got})
		}
	}
}

// walletScript makes a new script of wallet w at h.
func (c *chainSim) walletScript(w *fetchWalletSim, h int32) uint32 {
	id := c.newScript(h)
	w.scripts = append(w.scripts, id)
	w.label.Scripts = append(w.label.Scripts, c.names[id])
	return id
}

// walletSpend is the wallet's own transaction at h: it spends e.script,
// pays someone else and keeps its change.
func (c *chainSim) walletSpend(h int32, e chainEvent) {
	w := c.wallets[e.wallet]
	c.appear(e.script, h)
	payee := c.newScript(h)
	c.others = append(c.others, payee)
	c.pool = append(c.pool, payee)
	w.label.Payees = append(w.label.Payees, c.names[payee])
	c.walletScript(w, h)
}

// makeLabels draws every session's downloads and labels the chain.
func (c *chainSim) makeLabels() {
	o := c.opts
	c.labels = &FetchLabels{Network: params.Name, FirstHeight: 0, BlockCount: o.Blocks, CandidateCount: len(c.names),
		Wallets: []FetchWallet{}, Sessions: []FetchSession{}}
	tip := int32(o.Blocks - 1)
	heights := c.walletHeights()
	for i, w := range c.wallets {
		own := sortedHeights(heights[i])
		pfp := -math.Expm1(float64(len(w.scripts)) * math.Log1p(-1.0/bip158M))
		for range uniformInt(c.rng, o.Sessions) {
			s := &FetchSession{Kind: KindWallet, Wallet: w.label.ID, ScannedFrom: w.label.Birth, ScannedTo: tip,
				WalletHeights: own}
			taken := heightSet(own)
			s.FalsePositiveHeights = c.chanceHeights(s.ScannedFrom, tip, pfp, taken)
			s.DecoyHeights = c.randomHeights(s.ScannedFrom, tip, o.Decoys, taken)
			c.sessions = append(c.sessions, s)
		}
		c.labels.Wallets = append(c.labels.Wallets, w.label)
	}
	for range o.Noise {
		from := int32(c.rng.IntN(o.Blocks / 2))
		s := &FetchSession{Kind: KindNoise, ScannedFrom: from, ScannedTo: tip, WalletHeights: []int32{}, FalsePositiveHeights: []int32{}}
		s.DecoyHeights = c.randomHeights(from, tip, 2*uniformInt(c.rng, o.Payments), map[int32]bool{})
		c.sessions = append(c.sessions, s)
	}
	c.rng.Shuffle(len(c.sessions), func(i, j int) { c.sessions[i], c.sessions[j] = c.sessions[j], c.sessions[i] })
	for i, s := range c.sessions {
		s.ID = fmt.Sprintf("simf%d-%d", c.seed, i+1)
		s.Client = fmt.Sprintf("127.1.%d.%d:%d", i/250%250, i%250+1, 10000+c.rng.IntN(50000))
		c.labels.Sessions = append(c.labels.Sessions, *s)
	}
}

// walletHeights returns, per wallet, the heights its scripts appear at.
func (c *chainSim) walletHeights() []map[int32]bool {
	owner := map[uint32]int{}
	out := make([]map[int32]bool, len(c.wallets))
	for i, w := range c.wallets {
		out[i] = map[int32]bool{}
		for _, id := range w.scripts {
			owner[id] = i
		}
	}
	for _, a := range c.apps {
		if i, ok := owner[a.id]; ok {
			out[i][a.height] = true
		}
	}
	return out
}

// chanceHeights draws the blocks of from..to whose filter matches by
// chance, each with probability p, skipping from one to the next by a
// geometric draw; it marks them taken and returns those not taken
// before, in order.
func (c *chainSim) chanceHeights(from, to int32, p float64, taken map[int32]bool) []int32 {
	out := []int32{}
	if !(p > 0) {
		return out
	}
	for h := int64(from) - 1; ; {
		h += 1 + int64(math.Floor(math.Log1p(-c.rng.Float64())/math.Log1p(-p)))
		if h > int64(to) {
			return out
		}
		if !taken[int32(h)] {
			taken[int32(h)] = true
			out = append(out, int32(h))
		}
	}
}

func heightSet(hs []int32) map[int32]bool {
	m := make(map[int32]bool, len(hs))
	for _, h := range hs {
		m[h] = true
	}
	return m
}

func sortedHeights(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// randomHeights draws up to n heights of from..to not yet taken, marks
// them taken and returns them in order.
func (c *chainSim) randomHeights(from, to int32, n int, taken map[int32]bool) []int32 {
	got := map[int32]bool{}
	for tries := 0; len(got) < n && tries < 100*n; tries++ {
		h := from + int32(c.rng.IntN(int(to-from)+1))
		if !taken[h] {
			taken[h], got[h] = true, true
		}
	}
	return sortedHeights(got)
}

// WriteIndex writes the chain's appearance index (package universe's
// format, as "privacy universe --index" writes it: every appearance with
// the position of its transaction in the block, index version 2). Without
// a chain it writes nothing.
func (s *Scenario) WriteIndex(w io.Writer) error {
	c := s.chain
	if c == nil {
		return nil
	}
	ix := universe.NewIndexWriter("", 0)
	defer ix.Close()
	for _, a := range c.apps {
		ix.AddTx(c.names[a.id], a.height, int(a.tx))
	}
	if _, err := ix.WriteTo(w, &universe.IndexHeader{Network: c.labels.Network, First: c.labels.FirstHeight, Hashes: c.hashes}); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// WriteFetchCapture writes the BIP 157 capture: per session, its filter
// header and filter ranges (getcfheaders, getcfilters) over the scanned
// range, then the blocks it fetched (getdata), as "privacy capture"
// records them. Without a chain it writes nothing.
func (s *Scenario) WriteFetchCapture(w io.Writer) error {
	c := s.chain
	if c == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	basic := uint8(0)
	for i, fs := range c.sessions {
		t := captureEpoch.Add(time.Duration(i) * time.Minute)
		rec := func(r capture.Record) error {
			r.Time, r.Client, r.Session = t, fs.Client, fs.ID
			if err := enc.Encode(r); err != nil {
				return fmt.Errorf("fetch capture: %w", err)
			}
			return nil
		}
		for _, batch := range []struct {
			cmd  string
			size int32
		}{{capture.CmdGetCFHeaders, cfHeadersBatch}, {capture.CmdGetCFilters, cfiltersBatch}} {
			for from := fs.ScannedFrom; from <= fs.ScannedTo; from += batch.size {
				start := uint32(from)
				stop := min(from+batch.size-1, fs.ScannedTo)
				if err := rec(capture.Record{Command: batch.cmd, FilterType: &basic, StartHeight: &start,
					StopHash: c.hashes[stop-c.labels.FirstHeight].String()}); err != nil {
					return err
				}
			}
		}
		fetched := slices.Concat(fs.WalletHeights, fs.DecoyHeights, fs.FalsePositiveHeights)
		slices.Sort(fetched)
		for part := range slices.Chunk(fetched, getDataBatch) {
			var blocks []capture.BlockRequest
			for _, h := range part {
				blocks = append(blocks, capture.BlockRequest{Hash: c.hashes[h-c.labels.FirstHeight].String(), Type: "witness_block"})
			}
			if err := rec(capture.Record{Command: capture.CmdGetData, Blocks: blocks}); err != nil {
				return err
			}
		}
	}
	return nil
}
