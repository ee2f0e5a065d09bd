package btcwallet

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// spvfilterCase is this package's backend over spvfilter's client. It
// never sends RelevantTx: it learns transactions from blocks only, and the
// wallet records the transactions it publishes itself.
var spvfilterCase = backendCase{
	name: "spvfilter",
	open: openSpvfilter(client.Config{}),
	emits: []string{
		kindClientConnected, kindBlockConnected, kindBlockDisconnected,
		kindFilteredBlockConnected, kindRescanProgress, kindRescanFinished,
	},
	keepsHashes: true,
}

// testLog is where the client and the backend log when the test's logs
// are asked for (logEnv).
func testLog() io.Writer {
	if os.Getenv(logEnv) != "" {
		return os.Stderr
	}
	return nil
}

// openSpvfilter returns the opening of a backend over a client of cfg
// (startClient). The birthday is not needed: the wallet's Rescan starts
// from the wallet's own tip.
func openSpvfilter(cfg client.Config) openBackend {
	return func(ctx context.Context, addrs []string, _ time.Time) (*backendLife, error) {
		cfg := cfg
		cfg.Peers = addrs
		c, release, err := startClient(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return &backendLife{client: New(c, Config{Log: testLog()}), release: release}, nil
	}
}

// startClient connects a client of cfg (its peers set) with its state in
// a new directory, starts its service and waits until it has every peer
// and their tip. release closes the client and removes the directory.
func startClient(ctx context.Context, cfg client.Config) (_ *client.Client, release func(), err error) {
	dir, err := os.MkdirTemp("", "btcwallet-spvfilter-*")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	cfg.Params, cfg.DataDir, cfg.Log = params, dir, testLog()
	c, err := client.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	release = func() {
		c.Close()
		os.RemoveAll(dir)
	}
	if err := c.Start(context.Background()); err != nil {
		release()
		return nil, nil, err
	}
	if err := waitClient(ctx, c, len(cfg.Peers)); err != nil {
		release()
		return nil, nil, err
	}
	return c, release, nil
}

// waitClient waits until the client is connected to n peers and current:
// it holds the tip of every peer.
func waitClient(ctx context.Context, c *client.Client, n int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		live := 0
		for _, st := range c.Peers() {
			if st.Reason == "" && st.Tip >= 0 {
				live++
			}
		}
		if live == n && c.IsCurrent() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("spvfilter: not synced (%d of %d peers, tip %d, current %v; peers %+v): %w",
				live, n, c.Chain().Height(), c.IsCurrent(), c.Peers(), ctx.Err())
		case <-tick.C:
		}
	}
}

// TestWalletFlow runs the wallet flow on this package's backend and on
// btcwallet's neutrino backend side by side on one chain, checks the
// notifications each delivered, and that both wallets end in the same
// state.
func TestWalletFlow(t *testing.T) {
	cases := []backendCase{spvfilterCase, neutrinoCase}
	res := runWalletFlows(t, cases...)
	for i, bc := range cases {
		checkNotifications(t, bc, res[i])
	}
	for i := 1; i < len(res); i++ {
		if !reflect.DeepEqual(res[i].final, res[0].final) {
			t.Errorf("final wallet states differ:\n%s: %v\n%s: %v", cases[0].name, res[0].final, cases[i].name, res[i].final)
		}
		if !reflect.DeepEqual(res[i].restored, res[0].restored) {
			t.Errorf("restored wallet states differ:\n%s: %v\n%s: %v", cases[0].name, res[0].restored, cases[i].name, res[i].restored)
		}
	}
}
