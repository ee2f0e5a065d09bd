package neutrinobench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the "bdb" driver, as neutrino's own tests use
	"github.com/lightninglabs/neutrino"
)

// ScanStats is what one scan found and cost.
type ScanStats struct {
	// Matched holds the txids of the transactions that pay to or spend
	// from a watched script.
	Matched map[chainhash.Hash]bool
	// Tip is the height of the synced chain.
	Tip int32
	// BlocksFetched counts the full blocks downloaded.
	BlocksFetched int
	// BytesReceived counts the bytes read from the nodes, handshake and
	// header sync included.
	BytesReceived uint64

	// release closes the connections and removes what the client
	// stored. It is left to the caller, so that a measurement ends when
	// the results are in hand: neutrino's ChainService.Stop alone takes
	// about 0.1 s.
	release func()
}

// Release closes the scan's connections and removes what it stored.
func (st *ScanStats) Release() {
	if st.release != nil {
		st.release()
		st.release = nil
	}
}

// scanNeutrino does with lightninglabs/neutrino what ScanBIP157 does: a
// ChainService with a fresh data directory and database, connected only to
// addrs, syncs block headers and filter headers (verifying them as it
// always does); then every filter from..to (to < 0: the tip) is fetched
// with GetCFilter in optimistic batches of 1,000, matched with MatchAny,
// and each matching block is fetched with GetBlock and searched. That is
// the path of neutrino's own Rescan when it catches up (blockFilterMatches,
// then extractBlockMatches), without its notification machinery.
func scanNeutrino(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (_ *ScanStats, err error) {
	var release []func()
	releaseAll := func() {
		for i := len(release) - 1; i >= 0; i-- {
			release[i]()
		}
	}
	defer func() {
		if err != nil {
			releaseAll()
		}
	}()
	dir, err := os.MkdirTemp("", "neutrinobench-neutrino-*")
	if err != nil {
		return nil, err
	}
	release = append(release, func() { os.RemoveAll(dir) })
	db, err := walletdb.Create("bdb", filepath.Join(dir, "neutrino.db"), true, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("neutrino: walletdb: %w", err)
	}
	release = append(release, func() { db.Close() })
	var received atomic.Uint64
	cs, err := neutrino.NewChainService(neutrino.Config{
		DataDir:      dir,
		Database:     db,
		ChainParams:  *params,
		ConnectPeers: addrs,
		Dialer: func(addr net.Addr) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, addr.Network(), addr.String())
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, n: &received}, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("neutrino: %w", err)
	}
	if err := cs.Start(); err != nil {
		return nil, fmt.Errorf("neutrino: start: %w", err)
	}
	release = append(release, func() { cs.Stop() })
	tip, err := waitNeutrinoSynced(ctx, cs, len(addrs))
	if err != nil {
		return nil, err
	}
	if to < 0 {
		to = tip
	}
	st := &ScanStats{Tip: tip, Matched: make(map[chainhash.Hash]bool), release: releaseAll}
	wl := newOutputWatch(watch)
	for h := from; h <= to; h++ {
		hash, err := cs.GetBlockHash(int64(h))
		if err != nil {
			return nil, fmt.Errorf("neutrino: block hash at %d: %w", h, err)
		}
		filter, err := cs.GetCFilter(*hash, wire.GCSFilterRegular, neutrino.OptimisticBatch())
		if err != nil {
			return nil, fmt.Errorf("neutrino: filter at %d: %w", h, err)
		}
		if filter.N() == 0 {
			continue
		}
		matched, err := filter.MatchAny(builder.DeriveKey(hash), watch)
		if err != nil {
			return nil, fmt.Errorf("neutrino: matching the filter at %d: %w", h, err)
		}
		if !matched {
			continue
		}
		block, err := cs.GetBlock(*hash)
		if err != nil {
			return nil, fmt.Errorf("neutrino: block at %d: %w", h, err)
		}
		st.BlocksFetched++
		for _, tx := range block.MsgBlock().Transactions {
			if wl.involves(tx) {
				st.Matched[tx.TxHash()] = true
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	st.BytesReceived = received.Load()
	return st, nil
}

// waitNeutrinoSynced waits until the service has block and filter headers
// up to the height every one of its peers announced, and returns it.
func waitNeutrinoSynced(ctx context.Context, cs *neutrino.ChainService, peers int) (int32, error) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if ps := cs.Peers(); len(ps) == peers && cs.IsCurrent() {
			best, err := cs.BestBlock()
			if err != nil {
				return 0, fmt.Errorf("neutrino: best block: %w", err)
			}
			synced := true
			for _, p := range ps {
				synced = synced && best.Height >= p.StartingHeight()
			}
			if synced {
				return best.Height, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("neutrino: waiting for the header sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n *atomic.Uint64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(uint64(n))
	return n, err
}

// outputWatch finds the transactions that pay to a watched script or spend
// an output found paying to one, the same transactions spvfilter's scan
// reports on this chain (whose watched outputs are all paid in range).
type outputWatch struct {
	scripts map[string]bool
	found   map[wire.OutPoint]bool
}

func newOutputWatch(scripts [][]byte) *outputWatch {
	w := &outputWatch{scripts: make(map[string]bool, len(scripts)), found: make(map[wire.OutPoint]bool)}
	for _, s := range scripts {
		w.scripts[string(s)] = true
	}
	return w
}

func (w *outputWatch) involves(tx *wire.MsgTx) bool {
	hit := false
	for _, in := range tx.TxIn {
		if w.found[in.PreviousOutPoint] {
			hit = true
		}
	}
	var txid *chainhash.Hash
	for i, out := range tx.TxOut {
		if w.scripts[string(out.PkScript)] {
			if txid == nil {
				h := tx.TxHash()
				txid = &h
			}
			hit = true
			w.found[wire.OutPoint{Hash: *txid, Index: uint32(i)}] = true
		}
	}
	return hit
}
