package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// A chain of full blocks for the fed scan (see filterFeed), served by
// real btcd: each block's basic filter is about 20 KB, as a mainnet
// block's of 1 MB is (a basic filter is about 2% of its block without
// witnesses, bitcoin/bitcoin#12254). Its scripts are short, so that the
// block is of 160 KB and the chain is built in minutes: a node serves
// filters and filter hashes from its filter index, not from its blocks,
// which only the scan's matches are read of.

// fullBlockScripts is the number of distinct output scripts of a full
// block, and fullScriptSize the size of each: 7,700 of 11 bytes, a
// filter of about 19.8 KB in a block of about 160 KB.
const (
	fullBlockScripts = 7_700
	fullScriptSize   = 11
)

// fullScript returns output script i of height h: a push of 65,535
// bytes that holds 8, so that the script does not parse, is
// unspendable (txscript.IsUnspendable: the node keeps no coin of it)
// and, not being OP_RETURN, is in the block's basic filter (BIP 158).
func fullScript(h int32, i int) []byte {
	s := make([]byte, fullScriptSize)
	s[0], s[1], s[2] = txscript.OP_PUSHDATA2, 0xff, 0xff
	binary.LittleEndian.PutUint32(s[3:], uint32(h))
	binary.LittleEndian.PutUint32(s[7:], uint32(i))
	return s
}

// fullChain is a node whose chain from height 1 to tip is of full
// blocks; alice is paid in the coinbase at paidAt.
type fullChain struct {
	node   *peertest.Node
	alice  *peertest.Key
	tip    int32
	paidAt int32
}

// newFullChain starts a node and submits to it tip full blocks, each
// built here (a coinbase of fullBlockScripts outputs, proof of work at
// regtest's limit, times a second apart up to now: btcd answers no
// getheaders while its tip is more than a day old), the next built while
// the last is submitted.
func newFullChain(t *testing.T, tip int32) *fullChain {
	t.Helper()
	r := &fullChain{node: peertest.StartBtcd(t, peertest.WithArgs("--nobanning")), alice: peertest.NewKey("alice"), tip: tip, paidAt: tip / 2}
	params := r.node.Params
	blocks := make(chan *wire.MsgBlock, 4)
	errs := make(chan error, 1)
	go func() {
		defer close(blocks)
		prev, ts := *params.GenesisHash, time.Now().Add(-time.Duration(tip)*time.Second).Truncate(time.Second)
		for h := int32(1); h <= tip; h++ {
			var outs []*wire.TxOut
			if h == r.paidAt {
				outs = append(outs, wire.NewTxOut(1_000_000, r.alice.PkScript()))
			}
			ts = ts.Add(time.Second)
			b, err := fullBlock(params, h, prev, ts, outs)
			if err != nil {
				errs <- err
				return
			}
			prev = b.BlockHash()
			blocks <- b
		}
	}()
	start := time.Now()
	for b := range blocks {
		if err := r.node.RPC().SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
			t.Fatalf("submitblock: %v", err)
		}
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if n, err := r.node.RPC().GetBlockCount(); err != nil || int32(n) != tip {
		t.Fatalf("the chain ends at %d (%v), want %d", n, err, tip)
	}
	t.Logf("%d full blocks submitted in %v", tip, time.Since(start).Round(time.Second))
	return r
}

// fullBlock returns the full block of height h on prev, at time ts, its
// coinbase paying outs besides.
func fullBlock(params *chaincfg.Params, h int32, prev chainhash.Hash, ts time.Time, outs []*wire.TxOut) (*wire.MsgBlock, error) {
	sig, err := txscript.NewScriptBuilder().AddInt64(int64(h)).AddData([]byte("full")).Script()
	if err != nil {
		return nil, err
	}
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), sig, nil))
	value := blockchain.CalcBlockSubsidy(h, params)
	for _, o := range outs {
		value -= o.Value
	}
	cb.AddTxOut(wire.NewTxOut(value, []byte{txscript.OP_TRUE}))
	for _, o := range outs {
		cb.AddTxOut(o)
	}
	for i := range fullBlockScripts {
		cb.AddTxOut(wire.NewTxOut(0, fullScript(h, i)))
	}
	b, err := peertest.SolveBlock(params, prev, ts, []*wire.MsgTx{cb})
	if err != nil {
		return nil, fmt.Errorf("the full block of height %d: %w", h, err)
	}
	return b, nil
}

// fullScan is one honest scan of a fullChain: the node's CPU and the
// wall time it took, what the client received, and the getcfheaders
// ranges in the fed segments.
type fullScan struct {
	cpu, wall time.Duration
	received  uint64
	fedHashes int
}

// scanFull scans r from 0 with a new client of one honest peer (a proxy
// of r's node, which logs the requests) and measures it.
func scanFull(t *testing.T, r *fullChain) fullScan {
	t.Helper()
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, nil)
	c := connectTo(t, r.node, time.Minute, l.Addr)
	cpu0, ok := r.node.CPU()
	if !ok {
		t.Skip("the node's CPU time is not measured here")
	}
	before := peerStatus(c, l.Addr).BytesReceived
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	wall := time.Since(start)
	cpu1, _ := r.node.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Matches, func(m Match) bool { return m.Height == r.paidAt && !m.FalsePositive }) {
		t.Fatalf("the payment to alice at %d was not found: %+v", r.paidAt, res.Matches)
	}
	hs, _ := cfRequests(t, l, c)
	fed := 0
	for _, q := range hs {
		if q[1] <= r.tip/wire.CFCheckptInterval*wire.CFCheckptInterval {
			fed++
		}
	}
	c.Close()
	return fullScan{cpu: cpu1 - cpu0, wall: wall, received: peerStatus(c, l.Addr).BytesReceived - before, fedHashes: fed}
}

// TestFeedFullBlockCost measures, on a chain of full blocks served by
// btcd, an honest scan from 0 with the fed segments' check (see
// filterFeed: every segment of full blocks passes fatSegmentBytes, so
// each has its filter hashes asked) against the same scan without it
// (fatBound out of reach): the node's CPU and the scan's wall time, in
// rounds that alternate the two (the first round a warm-up, not
// counted). A measurement: it runs only when SPVFILTER_FULL_ROUNDS is
// set (the chain's tip from SPVFILTER_FULL_BLOCKS, 3,003 by default:
// three fed segments, built in about 10 minutes on 2 cores).
func TestFeedFullBlockCost(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("SPVFILTER_FULL_ROUNDS"))
	if rounds <= 0 {
		t.Skip("measurement: set SPVFILTER_FULL_ROUNDS to the number of rounds")
	}
	tip := int32(peertest.EnvCount(t, "SPVFILTER_FULL_BLOCKS", 3003))
	r := newFullChain(t, tip)
	defer func(b int64) { fatBound = b }(fatBound)
	fed := int(tip / wire.CFCheckptInterval)
	modes := []struct {
		name  string
		bound int64
		asked int // the getcfheaders in fed segments
	}{{"checked", fatSegmentBytes, fed}, {"unchecked", 1 << 50, 0}}
	got := make([][]fullScan, len(modes))
	for round := 0; round <= rounds; round++ {
		for k := range modes {
			i := (k + round) % len(modes)
			fatBound = modes[i].bound
			s := scanFull(t, r)
			t.Logf("round %d %s: node cpu %v, wall %v, %.2f MiB, %d getcfheaders in fed segments", round, modes[i].name,
				s.cpu, s.wall.Round(time.Millisecond), mib(s.received), s.fedHashes)
			if s.fedHashes != modes[i].asked {
				t.Errorf("%s: %d getcfheaders in the %d fed segments, want %d", modes[i].name, s.fedHashes, fed, modes[i].asked)
			}
			if round > 0 {
				got[i] = append(got[i], s)
			}
		}
	}
	cpu, wall := ratios(got[0], got[1])
	t.Logf("checked/unchecked: node cpu %s, wall %s", cpu, wall)
}

// ratios returns the ratio of a's to b's node CPU and wall times, the
// ratio of the sums and the range of the rounds' ratios.
func ratios(a, b []fullScan) (cpu, wall string) {
	f := func(get func(fullScan) time.Duration) string {
		var sa, sb time.Duration
		lo, hi := 1e9, 0.0
		for i := range min(len(a), len(b)) {
			sa, sb = sa+get(a[i]), sb+get(b[i])
			x := float64(get(a[i])) / float64(get(b[i]))
			lo, hi = min(lo, x), max(hi, x)
		}
		return fmt.Sprintf("%.3fx (rounds %.3f-%.3f)", float64(sa)/float64(sb), lo, hi)
	}
	return f(func(s fullScan) time.Duration { return s.cpu }), f(func(s fullScan) time.Duration { return s.wall })
}
