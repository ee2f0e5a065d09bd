package client

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestMeasureScan mines a chain of 2,100 blocks, each with a transaction,
// payments to two watched keys scattered through it and spends of some of
// them, then scans it whole in both modes and prints the time and bytes
// each took, next to downloading every block. It runs only with
// SPVFILTER_LONG=1:
//
//	SPVFILTER_LONG=1 go test ./peer/client -run TestMeasureScan -v
func TestMeasureScan(t *testing.T) {
	if os.Getenv("SPVFILTER_LONG") != "1" {
		t.Skip("measurement: set SPVFILTER_LONG=1 to run")
	}
	const blocks = 2100
	node := peertest.StartBtcd(t)
	node.Generate(t, 101)
	watched := []*peertest.Key{peertest.NewKey("measure watched 1"), peertest.NewKey("measure watched 2")}
	watch := [][]byte{watched[0].PkScript(), watched[1].PkScript()}
	other := peertest.NewKey("measure other")
	var pending []peertest.Output
	var fan *wire.MsgTx // the previous block's fan-out transaction
	expect := 0
	mineStart := time.Now()
	for h := 102; h <= blocks; h++ {
		// Each block: a coinbase spend fanning out to eight outputs
		// (and now and then paying a watched key), and eight
		// transactions spending the previous block's fan-out.
		outs := make([]*wire.TxOut, 8)
		for i := range outs {
			outs[i] = wire.NewTxOut(50_000, other.PkScript())
		}
		k := watched[(h/37)%2]
		if h%37 == 0 {
			outs = append(outs, wire.NewTxOut(20_000, k.PkScript()))
		}
		tx := node.SpendCoinbase(t, outs...)
		txs := []*wire.MsgTx{tx}
		if h%37 == 0 {
			pending = append(pending, peertest.OutputOf(tx, 8, k))
			expect++
		}
		if fan != nil {
			for i := uint32(0); i < 8; i++ {
				in := peertest.OutputOf(fan, i, other)
				txs = append(txs, node.Spend(t, []peertest.Output{in}, wire.NewTxOut(in.Value-peertest.Fee, other.PkScript())))
			}
		}
		fan = tx
		// Now and then a payment to a watched key is spent.
		if h%37 == 20 && len(pending) > 0 && len(pending)%3 == 0 {
			in := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			txs = append(txs, node.Spend(t, []peertest.Output{in}, wire.NewTxOut(in.Value-peertest.Fee, other.PkScript())))
			expect++
		}
		node.Confirm(t, txs...)
	}
	t.Logf("mined %d blocks in %v; %d transactions involve the watch list", blocks, time.Since(mineStart).Round(time.Millisecond), expect)

	ctx := context.Background()
	run := func(name string, scan func(c *Client) (*ScanResult, error)) {
		c, err := Connect(ctx, Config{Peers: []string{node.P2PAddr}, Params: node.Params})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := scan(c)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, m := range res.Matches {
			if !m.FalsePositive {
				found++
			}
		}
		if res.Matches != nil && found != expect {
			t.Errorf("%s found %d transactions, want %d", name, found, expect)
		}
		fmt.Printf("%-16s %5d blocks  %8.3f s  %10d bytes  found %d  filters %d  merkleblocks %d  blocks fetched %d  false-positive blocks %d  reloads %d\n",
			name, res.BlocksScanned, time.Since(start).Seconds(), res.BytesReceived, found,
			res.FiltersReceived, res.MerkleBlocksReceived, res.BlocksFetched, res.FalsePositiveBlocks, res.FilterReloads)
	}
	req := func(c *Client) ScanRequest { return ScanRequest{Watch: items(watch), To: c.Chain().Height()} }
	run("bip157", func(c *Client) (*ScanResult, error) { return c.ScanBIP157(ctx, req(c)) })
	for _, fp := range []float64{0.0001, 0.01} {
		run(fmt.Sprintf("bip37 fp=%g", fp), func(c *Client) (*ScanResult, error) {
			return c.ScanBIP37(ctx, req(c), BIP37Options{FPRate: fp, Flags: wire.BloomUpdateAll})
		})
	}
	run("full blocks", func(c *Client) (*ScanResult, error) {
		before := c.pool.BytesReceived()
		res := &ScanResult{BlocksScanned: int(c.Chain().Height()) + 1}
		var heights []int32
		for h := int32(0); h <= c.Chain().Height(); h++ {
			heights = append(heights, h)
		}
		blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, nil)
		res.BlocksFetched = len(blocks)
		res.BytesReceived = c.pool.BytesReceived() - before
		return res, err
	})
}
