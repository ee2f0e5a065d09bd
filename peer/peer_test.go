package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// fixture is a regtest chain shared by the tests of this package: blocks
// past the first filter checkpoint (height 1000), with transactions the
// tests know about.
type fixture struct {
	node *peertest.Node
	// watch: 0 alice (P2PKH), 1 carol (P2PKH, funded before the scanned
	// range of the subrange test)
	watch [][]byte
	// want maps each transaction that involves a watch item to the items.
	want map[chainhash.Hash][]int
	// heights of the transactions in want
	height map[chainhash.Hash]int32
	// spendAlice spends alice's first output to bob: only the update
	// rules (or the revealed key) find it.
	spendAlice *wire.MsgTx
	// late is a transaction after height 1000 paying carol.
	late       *wire.MsgTx
	spendCarol *wire.MsgTx
	fundCarol  *wire.MsgTx
	tip        int32
}

var (
	fx        *fixture
	fxOnce    sync.Once
	fxErr     error
	fxStarted bool
)

// needFixture starts the shared node on first use, so that fuzzing and
// examples run without it.
func needFixture(t *testing.T) {
	t.Helper()
	fxOnce.Do(func() {
		fxStarted = true
		fx, fxErr = newFixture()
	})
	if fxErr != nil {
		t.Fatalf("setting up btcd: %v", fxErr)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fxStarted && fx != nil && fx.node != nil {
		if code != 0 || fxErr != nil {
			fmt.Fprintf(os.Stderr, "btcd output (tail):\n%s\n", fx.node.LogTail(40))
		}
		fx.node.Stop()
	}
	os.Exit(code)
}

func newFixture() (*fixture, error) {
	node, err := peertest.Start(peertest.WithArgs("--nobanning"))
	if err != nil {
		return nil, err
	}
	f := &fixture{node: node, want: map[chainhash.Hash][]int{}, height: map[chainhash.Hash]int32{}}
	alice, bob, carol, dave := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol"), peertest.NewKey("dave")
	f.watch = [][]byte{alice.PkScript(), carol.PkScript()}
	mine := func(n int) error {
		_, err := node.GenerateErr(n)
		return err
	}
	confirm := func(txs ...*wire.MsgTx) error {
		hash, err := node.ConfirmErr(txs...)
		if err != nil {
			return err
		}
		h, err := node.RPC().GetBlockVerbose(hash)
		if err != nil {
			return err
		}
		for _, tx := range txs {
			f.height[tx.TxHash()] = int32(h.Height)
		}
		return nil
	}
	if err := mine(101); err != nil {
		return f, err
	}
	// Height 102: alice is paid; dave too, in another transaction.
	fundAlice, err := node.SpendCoinbaseErr(wire.NewTxOut(50_000_000, alice.PkScript()))
	if err != nil {
		return f, err
	}
	toDave, err := node.SpendCoinbaseErr(wire.NewTxOut(20_000_000, dave.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(fundAlice, toDave); err != nil {
		return f, err
	}
	f.want[fundAlice.TxHash()] = []int{0}
	if err := mine(5); err != nil {
		return f, err
	}
	// Height 108: alice pays bob; nothing in it but alice's outpoint
	// links it to the watch list.
	f.spendAlice, err = node.SpendErr([]peertest.Output{peertest.OutputOf(fundAlice, 0, alice)},
		wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.spendAlice); err != nil {
		return f, err
	}
	f.want[f.spendAlice.TxHash()] = []int{0}
	// Height 109: carol is paid.
	f.fundCarol, err = node.SpendCoinbaseErr(wire.NewTxOut(30_000_000, carol.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.fundCarol); err != nil {
		return f, err
	}
	f.want[f.fundCarol.TxHash()] = []int{1}
	// Past the first checkpoint: carol spends to bob, and the same
	// block pays carol again from a coinbase.
	if err := mine(1000 - 109 + 20); err != nil {
		return f, err
	}
	f.spendCarol, err = node.SpendErr([]peertest.Output{peertest.OutputOf(f.fundCarol, 0, carol)},
		wire.NewTxOut(30_000_000-peertest.Fee, bob.PkScript()))
	if err != nil {
		return f, err
	}
	f.late, err = node.SpendCoinbaseErr(wire.NewTxOut(1_000_000, carol.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.spendCarol, f.late); err != nil {
		return f, err
	}
	f.want[f.spendCarol.TxHash()] = []int{1}
	f.want[f.late.TxHash()] = []int{1}
	if err := mine(30); err != nil {
		return f, err
	}
	count, err := node.RPC().GetBlockCount()
	if err != nil {
		return f, err
	}
	f.tip = int32(count)
	return f, nil
}

func dial(t *testing.T, addr string, timeout time.Duration) *Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Dial(ctx, Config{Addr: addr, Params: fx.node.Params, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func syncHeaders(t *testing.T, p *Peer) *HeaderChain {
	t.Helper()
	chain, err := p.SyncHeaders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func TestSyncHeaders(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	if p.Services()&wire.SFNodeBloom == 0 || p.Services()&wire.SFNodeCF == 0 {
		t.Fatalf("services %v: want bloom and cf", p.Services())
	}
	chain := syncHeaders(t, p)
	if chain.Height() != fx.tip {
		t.Fatalf("chain height %d, node has %d", chain.Height(), fx.tip)
	}
	for _, h := range []int32{0, 1, 999, 1000, fx.tip} {
		want, err := fx.node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if got := chain.Hash(h); got != *want {
			t.Errorf("height %d: hash %v, node says %v", h, got, want)
		}
		if got, ok := chain.HeightOf(*want); !ok || got != h {
			t.Errorf("HeightOf(%v) = %d, %v; want %d", want, got, ok, h)
		}
	}
	if hdr := chain.Header(5); hdr.BlockHash() != chain.Hash(5) {
		t.Error("Header(5) does not hash to Hash(5)")
	}
	if chain.Hash(fx.tip+1) != (chainhash.Hash{}) {
		t.Error("Hash above the tip is not the zero hash")
	}
}

func TestFetchBlocks(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	chain := syncHeaders(t, p)
	var heights []int32
	err := p.FetchBlocks(context.Background(), chain, 100, 140, func(h int32, b *wire.MsgBlock) error {
		heights = append(heights, h)
		want, err := fx.node.RPC().GetBlock(ptr(chain.Hash(h)))
		if err != nil {
			return err
		}
		if len(b.Transactions) != len(want.Transactions) {
			return fmt.Errorf("height %d: %d transactions, node has %d", h, len(b.Transactions), len(want.Transactions))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(heights) != 41 || heights[0] != 100 || heights[40] != 140 {
		t.Fatalf("blocks delivered for heights %v", heights)
	}
	stop := errors.New("stop")
	err = p.FetchBlocks(context.Background(), chain, 0, 3, func(int32, *wire.MsgBlock) error { return stop })
	if err != stop {
		t.Fatalf("error from the callback: got %v", err)
	}
	// The blocks left of the stopped batch do not reach the next request.
	if err := p.FetchBlocks(context.Background(), chain, 10, 10, func(h int32, b *wire.MsgBlock) error { return nil }); err != nil {
		t.Fatalf("fetch after a stopped fetch: %v", err)
	}
	if err := p.FetchBlocks(context.Background(), chain, 5, 4, nil); err == nil {
		t.Fatal("reversed range accepted")
	}
}

func ptr[T any](v T) *T { return &v }

// scan runs one mode over from..to.
func scan(t *testing.T, p *Peer, chain *HeaderChain, mode string, from, to int32) (*ScanResult, error) {
	t.Helper()
	ctx := context.Background()
	if mode == "bip37" {
		f, err := NewWatchFilter(fx.watch, 0.0001, 7)
		if err != nil {
			t.Fatal(err)
		}
		return p.ScanBIP37Watch(ctx, chain, f, fx.watch, from, to, nil)
	}
	return p.ScanBIP157(ctx, chain, fx.watch, from, to, nil)
}

// checkMatches compares the transactions found (false positives aside)
// with the expected set; optional ones may be found or not.
func checkMatches(t *testing.T, res *ScanResult, want map[chainhash.Hash][]int, optional ...*wire.MsgTx) {
	t.Helper()
	got := map[chainhash.Hash]bool{}
	for _, m := range res.Matches {
		if m.FalsePositive {
			if len(m.WatchItems) != 0 {
				t.Errorf("%v: false positive with watch items %v", m.Txid, m.WatchItems)
			}
			continue
		}
		got[m.Txid] = true
		items, ok := want[m.Txid]
		if !ok && slices.ContainsFunc(optional, func(tx *wire.MsgTx) bool { return tx.TxHash() == m.Txid }) {
			items, ok = fx.want[m.Txid]
		}
		if !ok {
			t.Errorf("unexpected match %v at height %d", m.Txid, m.Height)
			continue
		}
		if !slices.Equal(m.WatchItems, items) {
			t.Errorf("%v: watch items %v, want %v", m.Txid, m.WatchItems, items)
		}
		if h := fx.height[m.Txid]; m.Height != h {
			t.Errorf("%v: height %d, want %d", m.Txid, m.Height, h)
		}
		if m.Tx == nil || m.Tx.TxHash() != m.Txid {
			t.Errorf("%v: transaction missing or wrong", m.Txid)
		}
	}
	for id := range want {
		if !got[id] {
			t.Errorf("transaction %v (height %d) not found", id, fx.height[id])
		}
	}
}

func TestScanBothModes(t *testing.T) {
	needFixture(t)
	for _, mode := range []string{"bip37", "bip157"} {
		t.Run(mode, func(t *testing.T) {
			p := dial(t, fx.node.P2PAddr, 0)
			chain := syncHeaders(t, p)
			res, err := scan(t, p, chain, mode, 0, chain.Height())
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			if res.BlocksScanned != int(chain.Height())+1 || res.BytesReceived == 0 {
				t.Errorf("blocks scanned %d, bytes %d", res.BlocksScanned, res.BytesReceived)
			}
			switch mode {
			case "bip37":
				if res.MerkleBlocksReceived != res.BlocksScanned || res.FiltersReceived != 0 {
					t.Errorf("merkle blocks %d, filters %d", res.MerkleBlocksReceived, res.FiltersReceived)
				}
			case "bip157":
				if res.FiltersReceived != res.BlocksScanned || res.BlocksFetched < 4 || res.BlocksFetched != 4+res.FalsePositiveBlocks {
					t.Errorf("filters %d, blocks fetched %d, false-positive blocks %d",
						res.FiltersReceived, res.BlocksFetched, res.FalsePositiveBlocks)
				}
			}
		})
	}
}

// TestScanSubranges scans ranges that start after the funding of the
// spent outputs, and one starting past the first checkpoint.
func TestScanSubranges(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	chain := syncHeaders(t, p)
	hSpend := fx.height[fx.spendAlice.TxHash()]
	hLate := fx.height[fx.late.TxHash()]
	subset := func(ids ...*wire.MsgTx) map[chainhash.Hash][]int {
		m := map[chainhash.Hash][]int{}
		for _, tx := range ids {
			m[tx.TxHash()] = fx.want[tx.TxHash()]
		}
		return m
	}
	tests := []struct {
		mode     string
		from, to int32
		want     map[chainhash.Hash][]int
		optional []*wire.MsgTx
	}{
		// Only BIP 158 filters hold the spent scripts: the spend of
		// alice's output is found without having seen its funding.
		{"bip157", hSpend, hSpend, subset(fx.spendAlice), nil},
		{"bip157", 1001, fx.tip, func() map[chainhash.Hash][]int {
			m := map[chainhash.Hash][]int{}
			for id, items := range fx.want {
				if fx.height[id] > 1000 {
					m[id] = items
				}
			}
			return m
		}(), nil},
		// The same block spends carol's earlier output, but a BIP 37
		// filter that never saw the funding holds only carol's key
		// hash, which the spend does not contain: the node sends it only
		// as a Bloom false positive, and then the local check sees
		// carol's key in it.
		{"bip37", hLate, hLate, subset(fx.late), []*wire.MsgTx{fx.spendCarol}},
		{"bip157", 0, 100, map[chainhash.Hash][]int{}, nil},
		{"bip37", 0, 100, map[chainhash.Hash][]int{}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d-%d", tt.mode, tt.from, tt.to), func(t *testing.T) {
			res, err := scan(t, p, chain, tt.mode, tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, tt.want, tt.optional...)
			if res.Matches == nil {
				t.Error("Matches is nil, want an empty slice")
			}
		})
	}
}

// TestBIP37ClientSideUpdates scans with a filter the node does not update
// (BloomUpdateNone): the spend of alice's output is found only because the
// client sends the outpoint with filteradd and asks again.
func TestBIP37ClientSideUpdates(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	chain := syncHeaders(t, p)
	f := bip37.NewFilter(10, 0.0001, 3, wire.BloomUpdateNone)
	for _, s := range fx.watch {
		for _, e := range watchElements(s) {
			f.Add(e)
		}
	}
	res, err := p.ScanBIP37Watch(context.Background(), chain, f, fx.watch, 0, chain.Height(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if res.MerkleBlocksReceived <= res.BlocksScanned {
		t.Errorf("%d merkle blocks for %d blocks: no batch was asked for again", res.MerkleBlocksReceived, res.BlocksScanned)
	}
	// The caller's filter is not changed by the scan.
	op := fx.spendAlice.TxIn[0].PreviousOutPoint
	if f.ContainsOutPoint(&op) {
		t.Error("the caller's filter was updated")
	}
}

func TestFilterMessages(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	chain := syncHeaders(t, p)
	ctx := context.Background()
	if err := p.AddToFilter(ctx, make([]byte, bip37.MaxFilterAddDataSize+1)); !errors.Is(err, bip37.ErrFilterAddTooLarge) {
		t.Fatalf("oversized filteradd: %v", err)
	}
	f, _ := NewWatchFilter(fx.watch, 0.001, 0)
	if err := p.LoadFilter(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := p.AddToFilter(ctx, []byte("element")); err != nil {
		t.Fatal(err)
	}
	h := fx.height[fx.late.TxHash()]
	end, _ := p.begin("test")
	blocks, err := p.filteredBlocks(ctx, chain, h, h)
	end()
	if err != nil || len(blocks) != 1 || len(blocks[0].txs) == 0 {
		t.Fatalf("filtered block with a loaded filter: %v, %v", blocks, err)
	}
	if err := p.ClearFilter(ctx); err != nil {
		t.Fatal(err)
	}
	// Without a filter btcd answers filtered-block requests with
	// nothing: only the pong comes.
	end, _ = p.begin("test")
	_, err = p.filteredBlocks(ctx, chain, h, h)
	end()
	if !errors.Is(err, ErrMissingBlocks) {
		t.Fatalf("filtered block without a filter: %v, want ErrMissingBlocks", err)
	}
}

func TestConfigLog(t *testing.T) {
	needFixture(t)
	var log strings.Builder
	p, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: fx.node.Params, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.SyncHeaders(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"connected to " + fx.node.P2PAddr, "send getheaders", "headers: tip"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
}

func TestDialWrongNetwork(t *testing.T) {
	needFixture(t)
	_, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: &chaincfg.MainNetParams, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), fx.node.P2PAddr) {
		t.Fatalf("dialing a regtest node as mainnet: %v", err)
	}
	t.Log(err)
	if _, err := Dial(context.Background(), Config{Addr: "no-port", Params: &chaincfg.MainNetParams}); err == nil {
		t.Fatal("an address without a port was accepted")
	}
}

func TestContextCancel(t *testing.T) {
	needFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, Config{Addr: fx.node.P2PAddr, Params: fx.node.Params}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with a cancelled context: %v", err)
	}
	p := dial(t, fx.node.P2PAddr, 0)
	chain := syncHeaders(t, p)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	// Cancel from the progress callback, after the first batch.
	_, err := p.ScanBIP157(ctx, chain, fx.watch, 0, chain.Height(), func(done, total int) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan cancelled mid-way: %v", err)
	}
}
