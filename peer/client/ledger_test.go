package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// captured is what a relay saw a client ask, by heights of ch: the
// ranges of getcfilters and getcfheaders joined, and the blocks asked
// for, ascending.
type captured struct {
	filters, headers []heightRange
	fetched          []int32
	loads, adds      int
	lastLoad         *wire.MsgFilterLoad
}

func captureOf(t *testing.T, reqs []wire.Message, ch *chain.Chain) captured {
	t.Helper()
	var out captured
	seen := map[chainhash.Hash]bool{}
	stopHeight := func(h chainhash.Hash) int32 {
		height, ok := ch.HeightOf(h)
		if !ok {
			t.Fatalf("a range asked up to block %v, not in the chain", h)
		}
		return height
	}
	for _, m := range reqs {
		switch m := m.(type) {
		case *wire.MsgGetCFilters:
			out.filters, _ = addRange(out.filters, int32(m.StartHeight), stopHeight(m.StopHash))
		case *wire.MsgGetCFHeaders:
			out.headers, _ = addRange(out.headers, int32(m.StartHeight), stopHeight(m.StopHash))
		case *wire.MsgGetData:
			for _, iv := range m.InvList {
				if iv.Type != wire.InvTypeBlock && iv.Type != wire.InvTypeWitnessBlock || seen[iv.Hash] {
					continue
				}
				seen[iv.Hash] = true
				height, ok := ch.HeightOf(iv.Hash)
				if !ok {
					t.Fatalf("block %v asked for, not in the chain", iv.Hash)
				}
				out.fetched = append(out.fetched, height)
			}
		case *wire.MsgFilterLoad:
			out.loads++
			out.lastLoad = m
		case *wire.MsgFilterAdd:
			out.adds++
		}
	}
	slices.Sort(out.fetched)
	return out
}

// viewOf returns the ledger's view of addr.
func viewOf(t *testing.T, c *Client, addr string) ledgerView {
	t.Helper()
	for _, v := range c.ledger.views(c.chain) {
		if v.addr == addr {
			return v
		}
	}
	t.Fatalf("the ledger holds nothing of %s", addr)
	return ledgerView{}
}

// TestLedgerMatchesCapture: a BIP 157 scan and a GetBlock through one
// relay that records the client's requests, as a capturing node would:
// the ledger's view of the relay's address holds exactly the filter
// ranges, filter-header ranges and blocks the relay saw, and holds them
// again after the client is closed and opened on its data directory.
// A BIP 37 scan through a second relay records the filter it loaded.
func TestLedgerMatchesCapture(t *testing.T) {
	needFixture(t)
	relay := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	dir := t.TempDir()
	open := func() *Client {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := Connect(ctx, Config{Peers: []string{relay.Addr}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	ctx := context.Background()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), From: 100, To: fx.tip})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBlock(ctx, c.chain.Hash(fx.tip-3)); err != nil {
		t.Fatal(err)
	}
	want := captureOf(t, relay.Requests(), c.chain)
	if res.BlocksFetched == 0 || len(want.fetched) <= res.BlocksFetched-1 || len(want.filters) == 0 || len(want.headers) == 0 {
		t.Fatalf("the relay saw %d blocks, filter ranges %v and header ranges %v for a scan fetching %d blocks: nothing to compare",
			len(want.fetched), want.filters, want.headers, res.BlocksFetched)
	}
	check := func(when string, v ledgerView) {
		t.Helper()
		if !slices.Equal(v.filters, want.filters) || !slices.Equal(v.headers, want.headers) || !slices.Equal(v.fetched, want.fetched) ||
			v.unknown != 0 || v.incomplete || len(v.loaded) != 0 {
			t.Errorf("%s: the ledger says filters %v, headers %v, blocks %v (%d unknown, incomplete %v, %d filters loaded);\n"+
				"the relay saw filters %v, headers %v, blocks %v", when, v.filters, v.headers, v.fetched, v.unknown, v.incomplete, len(v.loaded),
				want.filters, want.headers, want.fetched)
		}
	}
	check("after the scan", viewOf(t, c, relay.Addr))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open()
	t.Cleanup(func() { c.Close() })
	check("after a restart", viewOf(t, c, relay.Addr))

	// BIP 37: the filter loaded is recorded as sent.
	bloomRelay := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c37 := connectTo(t, fx.node, 10*time.Second, bloomRelay.Addr)
	if _, err := c37.ScanBIP37(ctx, ScanRequest{Watch: items(fx.watch), From: 100, To: 120}, BIP37Options{FPRate: 0.0001}); err != nil {
		t.Fatal(err)
	}
	got, sent := viewOf(t, c37, bloomRelay.Addr), captureOf(t, bloomRelay.Requests(), c37.chain)
	if sent.loads == 0 || len(got.loaded) != sent.loads || sent.adds == 0 && !bytes.Equal(got.loaded[len(got.loaded)-1].Filter, sent.lastLoad.Filter) ||
		!slices.Equal(got.filtered, []heightRange{{100, 120}}) {
		t.Errorf("BIP 37: the ledger holds %d filters and filtered blocks %v; the relay saw %d filterloads and %d filteradds",
			len(got.loaded), got.filtered, sent.loads, sent.adds)
	}
}

// TestLedgerFile: the ledger's file holds what was recorded, and every
// cut or flipped byte of it is refused; a damaged file is set aside and
// the ledger starts again saying records were lost.
func TestLedgerFile(t *testing.T) {
	l := &ledger{}
	l.ranges("127.0.0.1:1", wire.CmdGetCFilters, 0, 999)
	l.ranges("127.0.0.1:1", wire.CmdGetCFilters, 1000, 1200)
	l.ranges("127.0.0.1:1", wire.CmdGetCFHeaders, 0, 1200)
	l.asked("127.0.0.1:1", []chainhash.Hash{{1}, {2}, {1}})
	l.asked("[::1]:2", []chainhash.Hash{{3}})
	f, err := bip37.NewFilterFromParams(make([]byte, 8), 3, 7, wire.BloomUpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	l.loaded("[::1]:2", f, nil)
	l.loaded("[::1]:2", nil, []byte{1, 2, 3})
	l.ranges("[::1]:2", wire.CmdMerkleBlock, 5, 5)
	l.ranges("[::1]:2", wire.CmdMerkleBlock, 6, 6)
	data := l.encode("regtest")
	back, err := decodeLedger(data, "regtest")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.encode("regtest"), data) {
		t.Fatal("the file read back encodes differently")
	}
	e := back.byAddr["127.0.0.1:1"]
	if !slices.Equal(e.filters, []heightRange{{0, 1200}}) || len(e.blocks) != 2 {
		t.Errorf("read back: filters %v, %d blocks", e.filters, len(e.blocks))
	}
	if e := back.byAddr["[::1]:2"]; len(e.loaded) != 1 || bytes.Equal(e.loaded[0].Filter, make([]byte, 8)) || !slices.Equal(e.filtered, []heightRange{{5, 6}}) {
		t.Errorf("the filteradd is not in the filter held, or the filtered blocks not joined: %+v", e)
	}
	if _, err := decodeLedger(data, "mainnet"); !errors.Is(err, errLedgerFile) {
		t.Errorf("another network's file: %v", err)
	}
	for i := range data {
		flipped := slices.Clone(data)
		flipped[i] ^= 0x10
		if _, err := decodeLedger(flipped, "regtest"); !errors.Is(err, errLedgerFile) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
		if _, err := decodeLedger(data[:i], "regtest"); !errors.Is(err, errLedgerFile) {
			t.Fatalf("cut at %d: %v", i, err)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ledgerFileName), data[:len(data)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	opened, note, err := openLedger(dir, "regtest", time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !opened.lost || !strings.Contains(note, "set aside as "+ledgerFileName+".damaged-1000") {
		t.Errorf("damaged: lost %v, note %q", opened.lost, note)
	}
	if err := opened.save(dir, "regtest", true); err != nil {
		t.Fatal(err)
	}
	again, note, err := openLedger(dir, "regtest", time.Unix(1001, 0))
	if err != nil || note != "" || !again.lost {
		t.Errorf("reopened after the damage: lost %v, note %q, %v: the loss must persist", again != nil && again.lost, note, err)
	}
}

// TestLedgerBounded: records past the ledger's bound are dropped, the
// peer's view marked incomplete, and the file stays within what is read.
func TestLedgerBounded(t *testing.T) {
	l := &ledger{}
	hashes := make([]chainhash.Hash, 1<<16)
	for i := range hashes {
		hashes[i][0], hashes[i][1], hashes[i][2] = byte(i), byte(i>>8), 1
	}
	for round := 0; round < maxLedgerBytes/(len(hashes)*chainhash.HashSize)+2; round++ {
		for i := range hashes {
			hashes[i][3] = byte(round)
		}
		l.asked("127.0.0.1:1", hashes)
	}
	for i := range maxLedgerAddrs + 1 {
		l.ranges("10.0.0."+string(rune('a'+i%26))+strings.Repeat("x", i/26)+":1", wire.CmdGetCFilters, 0, 1)
	}
	e := l.byAddr["127.0.0.1:1"]
	if !e.incomplete || !l.lost || len(l.order) > maxLedgerAddrs {
		t.Errorf("incomplete %v, lost %v, %d addresses", e.incomplete, l.lost, len(l.order))
	}
	if n := len(l.encode("regtest")); n > maxLedgerFile || l.size > maxLedgerBytes {
		t.Errorf("file of %d bytes (read up to %d), %d bytes of records (bound %d)", n, maxLedgerFile, l.size, maxLedgerBytes)
	}
	for _, v := range l.views(chain.New(&chaincfg.RegressionNetParams)) {
		if !v.incomplete {
			t.Fatalf("%s: a view of a ledger that lost records is not marked incomplete", v.addr)
		}
	}
}
