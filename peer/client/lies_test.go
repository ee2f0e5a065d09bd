package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
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
	var pe *peer.PeerError
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
		lie     peertest.LieFunc
		want    error
	}{
		{"cfilter that does not match its header", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.Data = append([]byte(nil), cf.Data...)
				cf.Data[len(cf.Data)-1] ^= 0x01
			}
			return []wire.Message{m}, false
		}, peer.ErrBadFilter},
		{"empty cfilter hiding a match", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.Data = []byte{0}
			}
			return []wire.Message{m}, false
		}, peer.ErrBadFilter},
		{"cfilter for another block", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				cf.BlockHash[0] ^= 1
			}
			return []wire.Message{m}, false
		}, peer.ErrBadFilter},
		{"tampered cfcheckpt", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cp, ok := m.(*wire.MsgCFCheckpt); ok && len(cp.FilterHeaders) > 0 {
				cp.FilterHeaders[0][0] ^= 1
			}
			return []wire.Message{m}, false
		}, peer.ErrBadFilterHeader},
		{"block with a changed transaction", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if b, ok := m.(*wire.MsgBlock); ok && len(b.Transactions) > 1 {
				b.Transactions[1].TxOut[0].Value++
			}
			return []wire.Message{m}, false
		}, peer.ErrBadBlock},
		{"cfilters never sent", "bip157", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFilter); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, peer.ErrStalled},
		{"disconnect mid-scan (bip157)", "bip157", 0, func(m wire.Message) ([]wire.Message, bool) {
			if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == funded {
				return nil, true
			}
			return []wire.Message{m}, false
		}, peer.ErrDisconnected},
		{"merkle block with a changed hash", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Hashes[0][0] ^= 1
			}
			return []wire.Message{m}, false
		}, peer.ErrBadProof},
		{"merkle block with a changed header", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Header.Nonce++
			}
			return []wire.Message{m}, false
		}, peer.ErrBadProof},
		{"merkle block with the root flag cleared", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Flags = append([]byte(nil), mb.Flags...)
				mb.Flags[0] &^= 0x01
			}
			return []wire.Message{m}, false
		}, peer.ErrBadProof},
		// Marking one more leaf as matched keeps the proof valid, but
		// the node then owes a transaction it does not send.
		{"merkle block claiming an extra match", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Flags = append([]byte(nil), mb.Flags...)
				mb.Flags[0] ^= 0x02
			}
			return []wire.Message{m}, false
		}, peer.ErrMissingTransactions},
		{"matched transactions withheld", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgTx); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, peer.ErrMissingTransactions},
		{"merkle block skipped", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				return nil, false
			}
			return []wire.Message{m}, false
		}, peer.ErrMissingBlocks},
		{"merkle block for another block", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				mb.Header = fx.node.Params.GenesisBlock.Header
			}
			return []wire.Message{m}, false
		}, peer.ErrBadProof},
		{"merkle blocks stall", "bip37", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgMerkleBlock); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, peer.ErrMissingBlocks},
		{"disconnect mid-scan (bip37)", "bip37", 0, func(m wire.Message) ([]wire.Message, bool) {
			if mb, ok := m.(*wire.MsgMerkleBlock); ok && mb.Header.BlockHash() == funded {
				return nil, true
			}
			return []wire.Message{m}, false
		}, peer.ErrDisconnected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One peer, and it lies: the scan fails naming it.
			l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, tt.lie)
			c := connect(t, tt.timeout, l.Addr)
			res, err := scan(t, c, tt.mode, 0, c.Chain().Height())
			if res != nil {
				t.Errorf("a result was returned with the error")
			}
			checkPeerError(t, err, l.Addr, tt.want)
			// The peer is no longer used: banned for a lie.
			st := c.Peers()[0]
			if st.Reason == "" || st.Banned != isLie(tt.want) {
				t.Errorf("peer status after the error: %+v", st)
			}
		})
	}
}

// TestRefusals checks that a scan mode the node does not offer is refused
// before any request of that mode is sent.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		mode      string
		service   string
		forbidden []string
	}{
		{"no bloom filters", []string{"--nopeerbloomfilters", "--nobanning"}, "bip37", "NODE_BLOOM",
			[]string{wire.CmdFilterLoad, wire.CmdFilterAdd, wire.CmdGetData}},
		// btcd v0.24.2 crashes on getcfilters with --nocfilters.
		{"no compact filters", []string{"--nocfilters", "--nobanning"}, "bip157", "NODE_COMPACT_FILTERS",
			[]string{wire.CmdGetCFCheckpt, wire.CmdGetCFHeaders, wire.CmdGetCFilters}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			node := peertest.StartBtcd(t, peertest.WithArgs(tt.args...))
			node.Generate(t, 3)
			l := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
			ctx := context.Background()
			c, err := Connect(ctx, Config{Peers: []string{l.Addr}, Params: node.Params})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("x").PkScript())}, To: 3}
			var res *ScanResult
			if tt.mode == "bip37" {
				res, err = c.ScanBIP37(ctx, req, BIP37Options{FPRate: 0.001})
			} else {
				res, err = c.ScanBIP157(ctx, req)
			}
			if res != nil {
				t.Error("a result was returned with the refusal")
			}
			if !errors.Is(err, ErrNoPeers) || !strings.Contains(err.Error(), tt.service) {
				t.Fatalf("refusal: %v, want ErrNoPeers naming %s", err, tt.service)
			}
			for _, cmd := range l.Commands() {
				if slices.Contains(tt.forbidden, cmd) {
					t.Errorf("%s was sent to the node: %v", cmd, l.Commands())
				}
			}
			// The node is alive and the connection still usable.
			if _, err := node.RPC().GetBlockCount(); err != nil {
				t.Errorf("node after the refusal: %v", err)
			}
			if _, err := c.SyncHeaders(ctx); err != nil || c.Chain().Height() != 3 {
				t.Errorf("sync after the refusal: %v", err)
			}
		})
	}
}
