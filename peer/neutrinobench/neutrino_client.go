package neutrinobench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the "bdb" driver, as neutrino's own tests use
	"github.com/lightninglabs/neutrino"
	"github.com/lightninglabs/neutrino/headerfs"
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
	// ByCommand counts the bytes read from the nodes by the command of
	// their message (see msgCounter).
	ByCommand map[string]uint64

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

// neutrinoSession is a ChainService synced with its peers.
type neutrinoSession struct {
	cs       *neutrino.ChainService
	tip      int32
	received *msgCounter
	release  func()
}

// startNeutrino starts a ChainService with a fresh data directory and
// database (bdb, as neutrino's own tests use), connected only to addrs, and
// waits until it has synced and verified block headers and filter headers
// up to the height its peers announced.
func startNeutrino(ctx context.Context, addrs []string, params *chaincfg.Params) (_ *neutrinoSession, err error) {
	var undo []func()
	s := &neutrinoSession{received: newMsgCounter()}
	s.release = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	dir, err := os.MkdirTemp("", "neutrinobench-neutrino-*")
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	db, err := walletdb.Create("bdb", filepath.Join(dir, "neutrino.db"), true, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("neutrino: walletdb: %w", err)
	}
	undo = append(undo, func() { db.Close() })
	s.cs, err = neutrino.NewChainService(neutrino.Config{
		DataDir:      dir,
		Database:     db,
		ChainParams:  *params,
		ConnectPeers: addrs,
		Dialer: func(addr net.Addr) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, addr.Network(), addr.String())
			if err != nil {
				return nil, err
			}
			return s.received.conn(c), nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("neutrino: %w", err)
	}
	if err := s.cs.Start(); err != nil {
		return nil, fmt.Errorf("neutrino: start: %w", err)
	}
	undo = append(undo, func() { s.cs.Stop() })
	if s.tip, err = waitNeutrinoSynced(ctx, s.cs, len(addrs)); err != nil {
		return nil, err
	}
	return s, nil
}

// runNeutrino starts a session, runs scan over from..to on it (to < 0: the
// tip) and returns what scan recorded; the session stays open until the
// caller releases the stats, unless scan fails.
func runNeutrino(ctx context.Context, addrs []string, params *chaincfg.Params, from, to int32,
	scan func(cs *neutrino.ChainService, st *ScanStats, from, to int32) error) (*ScanStats, error) {
	s, err := startNeutrino(ctx, addrs, params)
	if err != nil {
		return nil, err
	}
	if to < 0 {
		to = s.tip
	}
	st := &ScanStats{Tip: s.tip, Matched: make(map[chainhash.Hash]bool), release: s.release}
	if err := scan(s.cs, st, from, to); err != nil {
		s.release()
		return nil, err
	}
	st.BytesReceived = s.received.Total()
	st.ByCommand = s.received.ByCommand()
	return st, nil
}

// scanNeutrino does with lightninglabs/neutrino what ScanBIP157 does:
// after startNeutrino, every filter from..to (to < 0: the tip) is fetched
// with GetCFilter in optimistic batches of 1,000, matched with MatchAny,
// and each matching block is fetched with GetBlock and searched. That is
// the path of neutrino's own Rescan while it catches up
// (blockFilterMatches, then extractBlockMatches) without the rest of its
// machinery; scanNeutrinoRescan runs Rescan itself.
func scanNeutrino(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (*ScanStats, error) {
	return runNeutrino(ctx, addrs, params, from, to, func(cs *neutrino.ChainService, st *ScanStats, from, to int32) error {
		wl := newOutputWatch(watch)
		for h := from; h <= to; h++ {
			hash, err := cs.GetBlockHash(int64(h))
			if err != nil {
				return fmt.Errorf("neutrino: block hash at %d: %w", h, err)
			}
			filter, err := cs.GetCFilter(*hash, wire.GCSFilterRegular, neutrino.OptimisticBatch())
			if err != nil {
				return fmt.Errorf("neutrino: filter at %d: %w", h, err)
			}
			if filter.N() == 0 {
				continue
			}
			matched, err := filter.MatchAny(builder.DeriveKey(hash), watch)
			if err != nil {
				return fmt.Errorf("neutrino: matching the filter at %d: %w", h, err)
			}
			if !matched {
				continue
			}
			block, err := cs.GetBlock(*hash)
			if err != nil {
				return fmt.Errorf("neutrino: block at %d: %w", h, err)
			}
			st.BlocksFetched++
			for _, tx := range block.MsgBlock().Transactions {
				if wl.involves(tx) {
					st.Matched[tx.TxHash()] = true
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanNeutrinoRescan scans from..to (to < 0: the tip) with neutrino's
// wallet-facing API after startNeutrino: a Rescan from the block below
// from to the block at to, watching the addresses of the watched scripts,
// collecting the relevant transactions it notifies. Rescan follows the
// spends of the outputs it finds itself. BlocksFetched counts only the
// blocks with relevant transactions, since Rescan does not tell about
// false positives.
func scanNeutrinoRescan(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (*ScanStats, error) {
	watchAddrs := make([]btcutil.Address, len(watch))
	for i, script := range watch {
		_, a, _, err := txscript.ExtractPkScriptAddrs(script, params)
		if err != nil || len(a) != 1 {
			return nil, fmt.Errorf("neutrino rescan: watched script %x is not a single-address script", script)
		}
		watchAddrs[i] = a[0]
	}
	return runNeutrino(ctx, addrs, params, from, to, func(cs *neutrino.ChainService, st *ScanStats, from, to int32) error {
		stamp := func(h int32) (*headerfs.BlockStamp, error) {
			hash, err := cs.GetBlockHash(int64(h))
			if err != nil {
				return nil, fmt.Errorf("neutrino rescan: block hash at %d: %w", h, err)
			}
			return &headerfs.BlockStamp{Height: h, Hash: *hash}, nil
		}
		start, err := stamp(from - 1)
		if err != nil {
			return err
		}
		end, err := stamp(to)
		if err != nil {
			return err
		}
		quit := make(chan struct{})
		rescan := neutrino.NewRescan(&neutrino.RescanChainSource{ChainService: cs},
			neutrino.StartBlock(start), neutrino.EndBlock(end), neutrino.WatchAddrs(watchAddrs...), neutrino.QuitChan(quit),
			neutrino.NotificationHandlers(rpcclient.NotificationHandlers{
				// Called on the rescan's goroutine, one block after the other.
				OnFilteredBlockConnected: func(_ int32, _ *wire.BlockHeader, txs []*btcutil.Tx) {
					if len(txs) > 0 {
						st.BlocksFetched++
					}
					for _, tx := range txs {
						st.Matched[*tx.Hash()] = true
					}
				},
			}))
		errc := rescan.Start()
		select {
		case err = <-errc:
		case <-ctx.Done():
			err = ctx.Err()
		}
		close(quit)
		rescan.WaitForShutdown()
		if err != nil {
			return fmt.Errorf("neutrino rescan: %w", err)
		}
		return nil
	})
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
