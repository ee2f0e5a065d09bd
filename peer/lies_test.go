package peer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// blockHashAt asks the node for the hash at height.
func blockHashAt(t *testing.T, h int32) chainhash.Hash {
	t.Helper()
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	return *hash
}

// checkPeerError checks that err is a *PeerError from addr wrapping want.
func checkPeerError(t *testing.T, err error, addr string, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Peer != addr || pe.Op == "" {
		t.Fatalf("error %#v is not a *PeerError naming %s and the operation", err, addr)
	}
	if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("message %q does not name the peer on one line", err)
	}
}

func TestLyingPeers(t *testing.T) {
	needFixture(t)
	funded := blockHashAt(t, fx.height[fx.spendAlice.TxHash()]) // a block with a watched transaction
	tests := []struct {
		name    string
		mode    string // bip37, bip157, headers or blocks
		timeout time.Duration
		lie     func(wire.Message) ([]wire.Message, bool)
		want    error
	}{
		{"cfilter that does not match its header", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.Data = append([]byte(nil), cf.Data...)
				cf.Data[len(cf.Data)-1] ^= 0x01
			}
			return []wire.Message{m}, false
		}, ErrBadFilter},
		{"empty cfilter hiding a match", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.Data = []byte{0}
			}
			return []wire.Message{m}, false
		}, ErrBadFilter},
		{"cfilter for another block", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.BlockHash[0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadFilter},
		{"cfheaders off the checkpoint", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if ch, ok := m.(*wire.MsgCFHeaders); ok && len(ch.FilterHashes) > 500 {
				ch.FilterHashes[500][0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadFilterHeader},
		{"tampered cfcheckpt", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cp, ok := m.(*wire.MsgCFCheckpt); ok && len(cp.FilterHeaders) > 0 {
				cp.FilterHeaders[0][0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadFilterHeader},
		{"block with a changed transaction", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if b, ok := m.(*wire.MsgBlock); ok && len(b.Transactions) > 1 {
				b.Transactions[1].TxOut[0].Value++
			}
			return []wire.Message{m}, false
		}, ErrBadBlock},
		{"cfilters never sent", "bip157", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFilter); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrStalled},
		{"disconnect mid-scan (bip157)", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				return nil, true
			}
			return []wire.Message{m}, false
		}, ErrDisconnected},
		{"merkle block with a changed hash", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Hashes[0][0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadProof},
		{"merkle block with a changed header", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Header.Nonce++
			}
			return []wire.Message{m}, false
		}, ErrBadProof},
		{"merkle block with the root flag cleared", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Flags = append([]byte(nil), mb.Flags...)
				mb.Flags[0] &^= 0x01
			}
			return []wire.Message{m}, false
		}, ErrBadProof},
		// Marking one more leaf as matched keeps the proof valid, but
		// the node then owes a transaction it does not send.
		{"merkle block claiming an extra match", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Flags = append([]byte(nil), mb.Flags...)
				mb.Flags[0] ^= 0x02
			}
			return []wire.Message{m}, false
		}, ErrMissingTransactions},
		{"matched transactions withheld", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgTx); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrMissingTransactions},
		{"merkle block skipped", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrMissingBlocks},
		{"merkle block for another block", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Header = fx.node.Params.GenesisBlock.Header
			}
			return []wire.Message{m}, false
		}, ErrBadProof},
		{"merkle blocks stall", "bip37", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgMerkleBlock); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrMissingBlocks},
		{"disconnect mid-scan (bip37)", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				return nil, true
			}
			return []wire.Message{m}, false
		}, ErrDisconnected},
		{"headers that do not link", "headers", 0, func(m wire.Message) ([]wire.Message, bool) {
			if h, ok := m.(*wire.MsgHeaders); ok && len(h.Headers) > 10 {
				h.Headers[10].PrevBlock[0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadHeaders},
		{"headers with changed difficulty", "headers", 0, func(m wire.Message) ([]wire.Message, bool) {
			if h, ok := m.(*wire.MsgHeaders); ok && len(h.Headers) > 10 {
				h.Headers[10].Bits = 0x1d00ffff
			}
			return []wire.Message{m}, false
		}, ErrBadHeaders},
		{"headers stall", "headers", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgHeaders); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrStalled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The chain is synced from the honest node; the lie
			// comes from the liar.
			honest := dial(t, fx.node.P2PAddr, 0)
			chain := syncHeaders(t, honest)
			l := newLiar(t, fx.node.P2PAddr, fx.node.Params.Net, tt.lie)
			p := dial(t, l.Addr, tt.timeout)
			var err error
			switch tt.mode {
			case "headers":
				var c *HeaderChain
				c, err = p.SyncHeaders(context.Background())
				if c != nil {
					t.Errorf("a chain was returned with the error")
				}
			default:
				var res *ScanResult
				res, err = scan(t, p, chain, tt.mode, 0, chain.Height())
				if res != nil {
					t.Errorf("a result was returned with the error")
				}
			}
			checkPeerError(t, err, l.Addr, tt.want)
			// The connection is dropped after a lie.
			if _, err := p.SyncHeaders(context.Background()); !errors.Is(err, ErrDisconnected) {
				t.Errorf("after the lie: %v, want ErrDisconnected", err)
			}
		})
	}
}

// TestUnrequestedMessagesDoNotHoldAWait has a liar withhold the headers
// and send unrequested transactions faster than the timeout: the wait must
// still end after the timeout.
func TestUnrequestedMessagesDoNotHoldAWait(t *testing.T) {
	needFixture(t)
	l := newLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			return nil, false
		}
		return []wire.Message{m}, false
	})
	const timeout = 500 * time.Millisecond
	p := dial(t, l.Addr, timeout)
	stop := make(chan struct{})
	spam := make(chan error, 1)
	go func() {
		// Ten timeouts of spam at most, so that a client whose wait
		// the spam holds open fails the test instead of hanging it.
		tick := time.NewTicker(timeout / 5)
		defer tick.Stop()
		end := time.After(10 * timeout)
		for {
			select {
			case <-stop:
				spam <- nil
				return
			case <-end:
				spam <- nil
				return
			case <-tick.C:
				if err := l.inject(fx.spendAlice); err != nil {
					spam <- err
					return
				}
			}
		}
	}()
	start := time.Now()
	_, err := p.SyncHeaders(context.Background())
	elapsed := time.Since(start)
	close(stop)
	if err := <-spam; err != nil {
		t.Logf("injecting: %v", err)
	}
	checkPeerError(t, err, l.Addr, ErrStalled)
	if elapsed > 4*timeout {
		t.Fatalf("stalled after %v with a timeout of %v", elapsed, timeout)
	}
}

// TestRefusals checks that a scan mode the node does not offer is refused
// before any request of that mode is sent.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		mode      string
		forbidden []string
	}{
		{"no bloom filters", []string{"--nopeerbloomfilters", "--nobanning"}, "bip37",
			[]string{wire.CmdFilterLoad, wire.CmdFilterAdd, wire.CmdGetData}},
		// btcd v0.24.2 crashes on getcfilters with --nocfilters.
		{"no compact filters", []string{"--nocfilters", "--nobanning"}, "bip157",
			[]string{wire.CmdGetCFCheckpt, wire.CmdGetCFHeaders, wire.CmdGetCFilters}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			node := peertest.StartBtcd(t, peertest.WithArgs(tt.args...))
			node.Generate(t, 3)
			l := newLiar(t, node.P2PAddr, node.Params.Net, nil)
			ctx := context.Background()
			p, err := Dial(ctx, Config{Addr: l.Addr, Params: node.Params})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			chain := syncHeaders(t, p)
			var res *ScanResult
			if tt.mode == "bip37" {
				f, _ := NewWatchFilter([][]byte{peertest.NewKey("x").PkScript()}, 0.001, 0)
				res, err = p.ScanBIP37(ctx, chain, f, 0, chain.Height(), nil)
			} else {
				res, err = p.ScanBIP157(ctx, chain, [][]byte{{0x51}}, 0, chain.Height(), nil)
			}
			if res != nil {
				t.Error("a result was returned with the refusal")
			}
			checkPeerError(t, err, l.Addr, ErrMissingService)
			for _, cmd := range l.commands() {
				if slices.Contains(tt.forbidden, cmd) {
					t.Errorf("%s was sent to the node: %v", cmd, l.commands())
				}
			}
			// The node is alive and the connection still usable.
			if _, err := node.RPC().GetBlockCount(); err != nil {
				t.Errorf("node after the refusal: %v", err)
			}
			if c, err := p.SyncHeaders(ctx); err != nil || c.Height() != 3 {
				t.Errorf("sync after the refusal: %v", err)
			}
		})
	}
}
