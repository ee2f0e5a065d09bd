package btcwallet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/lightninglabs/neutrino"
)

// neutrinoCase is btcwallet's own compact-filter backend,
// chain.NeutrinoClient over lightninglabs/neutrino v0.16.0. It never
// sends RelevantTx: it learns transactions from blocks only.
var neutrinoCase = backendCase{
	name: "neutrino",
	open: openNeutrino,
	emits: []string{
		kindClientConnected, kindBlockConnected, kindBlockDisconnected,
		kindFilteredBlockConnected, kindRescanProgress, kindRescanFinished,
	},
}

// openNeutrino starts a neutrino ChainService in a new directory,
// connected only to addrs, waits for its header and filter header sync,
// and returns btcwallet's NeutrinoClient over it. The client is told the
// birthday, as Wallet.SynchronizeRPC does for a NeutrinoClient it is
// given directly (it cannot see through the recording wrapper).
func openNeutrino(ctx context.Context, addrs []string, birthday time.Time) (_ *backendLife, err error) {
	dir, err := os.MkdirTemp("", "btcwallet-neutrino-*")
	if err != nil {
		return nil, err
	}
	var undo []func()
	release := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	db, err := walletdb.Create("bdb", filepath.Join(dir, "neutrino.db"), true, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("neutrino database: %w", err)
	}
	undo = append(undo, func() { db.Close() })
	cs, err := neutrino.NewChainService(neutrino.Config{
		DataDir:      dir,
		Database:     db,
		ChainParams:  *params,
		ConnectPeers: addrs,
	})
	if err != nil {
		return nil, fmt.Errorf("neutrino: %w", err)
	}
	if err := cs.Start(); err != nil {
		return nil, fmt.Errorf("neutrino: %w", err)
	}
	undo = append(undo, func() { cs.Stop() })
	if err := waitNeutrino(ctx, cs, len(addrs)); err != nil {
		return nil, err
	}
	client := chain.NewNeutrinoClient(params, cs)
	client.SetStartTime(birthday)
	return &backendLife{client: client, release: release}, nil
}

// waitNeutrino waits until the service has all its peers and the block
// and filter headers up to the height each of them announced.
func waitNeutrino(ctx context.Context, cs *neutrino.ChainService, peers int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		best, err := cs.BestBlock()
		if err != nil {
			return fmt.Errorf("neutrino: best block: %w", err)
		}
		ps := cs.Peers()
		synced := len(ps) == peers && cs.IsCurrent()
		for _, p := range ps {
			synced = synced && best.Height >= p.StartingHeight()
		}
		if synced {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("neutrino: not synced (%d of %d peers, best block %d, current %v): %w",
				len(ps), peers, best.Height, cs.IsCurrent(), ctx.Err())
		case <-tick.C:
		}
	}
}
