package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// scan runs one mode over from..to.
func scan(t *testing.T, c *Client, mode string, from, to int32) (*ScanResult, error) {
	t.Helper()
	ctx := context.Background()
	req := ScanRequest{Watch: items(fx.watch), From: from, To: to}
	if mode == "bip37" {
		return c.ScanBIP37(ctx, req, BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll, Tweak: &testTweak})
	}
	return c.ScanBIP157(ctx, req)
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
			c := connect(t, 0)
			chain := c.Chain()
			res, err := scan(t, c, mode, 0, chain.Height())
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			if res.BlocksScanned != int(chain.Height())+1 || res.BytesReceived == 0 {
				t.Errorf("blocks scanned %d, bytes %d", res.BlocksScanned, res.BytesReceived)
			}
			switch mode {
			case "bip37":
				// A reload asks the blocks from there again.
				if res.MerkleBlocksReceived < res.BlocksScanned || res.FilterReloads == 0 && res.MerkleBlocksReceived != res.BlocksScanned || res.FiltersReceived != 0 {
					t.Errorf("merkle blocks %d for %d blocks after %d reloads, filters %d", res.MerkleBlocksReceived, res.BlocksScanned, res.FilterReloads, res.FiltersReceived)
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
	c := connect(t, 0)
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
			res, err := scan(t, c, tt.mode, tt.from, tt.to)
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

// TestBIP37UpdateModes scans with each update rule: with none and
// p2pubkey-only the node does not add alice's P2PKH outpoint, and her spend
// is found only because the client sends it with filteradd and asks for the
// block again.
func TestBIP37UpdateModes(t *testing.T) {
	needFixture(t)
	for _, flags := range []wire.BloomUpdateType{wire.BloomUpdateNone, wire.BloomUpdateP2PubkeyOnly, wire.BloomUpdateAll} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			c := connect(t, 0)
			res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), From: 0, To: c.Chain().Height()},
				BIP37Options{FPRate: 0.0001, Flags: flags})
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			// Blocks are asked again after a filteradd, or after a
			// reload (the node's additions filled the filter past its
			// bound), which BloomUpdateAll may need too.
			again := res.MerkleBlocksReceived > res.BlocksScanned
			if flags == wire.BloomUpdateAll && again && res.FilterReloads == 0 || flags != wire.BloomUpdateAll && !again {
				t.Errorf("%d merkle blocks for %d blocks with flags %v after %d reloads", res.MerkleBlocksReceived, res.BlocksScanned, flags, res.FilterReloads)
			}
		})
	}
}

func TestContextCancel(t *testing.T) {
	needFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Connect(ctx, Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect with a cancelled context: %v", err)
	}
	c := connect(t, 0)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	// Cancel from the progress callback, after the first batch.
	_, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), From: 0, To: c.Chain().Height(),
		Progress: func(done, total int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan cancelled mid-way: %v", err)
	}
}

// TestBIP37FilterReload: a filter that matches more than ReloadFactor
// times its rate is replaced by a fresh one with a new tweak, and nothing
// is lost on the way. (A reload cannot cure matches that come from a
// watched hash itself, as here: it is reloaded every time the rate is
// exceeded again.)
func TestBIP37FilterReload(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connect(t, 0, l.Addr)
	// A P2WPKH script of the miner's key hash: every coinbase pays to that
	// hash with P2PKH, so the node sends them all, and none is a match.
	minerHash := fx.node.MinerKey.PkScript()[3:23]
	watch := append(items(fx.watch), ScriptItem(append([]byte{0x00, 0x14}, minerHash...)))
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: watch, To: c.Chain().Height()},
		BIP37Options{FPRate: 0.02, Flags: wire.BloomUpdateAll})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	loads := 0
	for _, cmd := range l.Commands() {
		if cmd == wire.CmdFilterLoad {
			loads++
		}
	}
	if res.FilterReloads == 0 || loads != res.FilterReloads+1 {
		t.Fatalf("%d reloads reported, %d filterload messages sent", res.FilterReloads, loads)
	}
	if res.FalsePositiveBlocks < 500 {
		t.Errorf("%d false-positive blocks", res.FalsePositiveBlocks)
	}
	// Without the neighbour's hash the same scan keeps its filter, unless
	// its random tweak makes a push that every block carries (the miner's
	// key hash in each coinbase, the witness commitment) a false
	// positive, which at 2% befalls a few scans in a hundred: one of
	// three scans, each with a fresh tweak, must keep its filter.
	reloads := make([]int, 0, 3)
	for range 3 {
		res, err = c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()},
			BIP37Options{FPRate: 0.02, Flags: wire.BloomUpdateAll})
		if err != nil {
			t.Fatalf("a filter on target: %v", err)
		}
		if res.FilterReloads == 0 {
			return
		}
		reloads = append(reloads, res.FilterReloads)
	}
	t.Fatalf("a filter on target reloaded in each of three scans: %v reloads", reloads)
}

// TestBIP37NamesItsPeer: with several peers BIP 37 still filters at one,
// and the result says which.
func TestBIP37NamesItsPeer(t *testing.T) {
	needFixture(t)
	peers := honestPeers(t, 2)
	c := connect(t, 0, peers...)
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()},
		BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "rests on one peer") && (strings.Contains(w, peers[0]) || strings.Contains(w, peers[1]))
	}) {
		t.Fatalf("warnings %q do not name the one filtering peer", res.Warnings)
	}
}
