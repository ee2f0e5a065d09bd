package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// A getcfilters answer played by a lying proxy in front of btcd: each case
// is an attack on the read loop that takes the filters (cfilters.go,
// readloop.go, frame.go).

// filterAnswer is one GetCFilters of the first answerLen blocks through
// a peer: what the callback got, when GetCFilters returned, and whether a
// callback ran after that.
type filterAnswer struct {
	got     [][]byte
	err     error
	elapsed time.Duration
	late    atomic.Bool
}

const answerLen = 20

// getFilters dials addr with the timeout and asks for the filters of the
// first answerLen blocks of hashes.
func getFilters(t *testing.T, addr string, timeout time.Duration, hashes []chainhash.Hash) (*Peer, *filterAnswer) {
	t.Helper()
	p := dial(t, addr, timeout)
	a := &filterAnswer{}
	var returned atomic.Bool
	// A request the peer holds open beyond the timeout ends here, with
	// the context's error, which no case wants.
	ctx, cancel := context.WithTimeout(context.Background(), 5*timeout)
	defer cancel()
	start := time.Now()
	a.err = p.GetCFilters(ctx, 0, hashes[:answerLen], func(_ int, data []byte) error {
		if returned.Load() {
			a.late.Store(true)
		}
		a.got = append(a.got, data)
		return nil
	})
	a.elapsed = time.Since(start)
	returned.Store(true)
	return p, a
}

// trueFilters returns the hashes of the first answerLen blocks of the
// fixture's node and their filters, as its RPC gives them.
func trueFilters(t *testing.T) ([]chainhash.Hash, [][]byte) {
	t.Helper()
	var hashes []chainhash.Hash
	var filters [][]byte
	for h := int64(0); h < answerLen; h++ {
		hash, err := fx.node.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		f, err := fx.node.RPC().GetCFilter(hash, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		hashes, filters = append(hashes, *hash), append(filters, f.Data)
	}
	return hashes, filters
}

// afterFilters is a lie that passes the first k filters on and then does
// what rest says with each further one.
func afterFilters(k int, rest func(cf *wire.MsgCFilter) []wire.Message) peertest.LieFunc {
	var n atomic.Int32
	return func(m wire.Message) ([]wire.Message, bool) {
		cf, ok := m.(*wire.MsgCFilter)
		if !ok || int(n.Add(1)) <= k {
			return []wire.Message{m}, false
		}
		return rest(cf), false
	}
}

// TestLyingFilterAnswers: a node that interleaves other messages with its
// filters is served all of them, each once, in order, and stays
// connected; a node that answers byte by byte within the timeout too. A
// node that stalls in the middle of its answer (between filters, or
// inside one after its header), sends a filter of another block, or drips
// its answer slower than the timeout fails the request with the error
// naming the cause, after at most the timeout (with the scheduling's
// slack), never the quarter more a payload's read deadline may run
// (frame.go's bound), and its connection is dropped. No callback runs
// after GetCFilters returned.
func TestLyingFilterAnswers(t *testing.T) {
	needFixture(t)
	hashes, want := trueFilters(t)
	const timeout = 2 * time.Second
	const k = 7 // the filters served before the lie
	flood := func(cf *wire.MsgCFilter) []wire.Message {
		inv := wire.NewMsgInv()
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &chainhash.Hash{byte(len(cf.Data)), 7}))
		addrs := wire.NewMsgAddr()
		for i := range 10 {
			addrs.AddAddress(wire.NewNetAddressIPPort([]byte{10, 0, 0, byte(i + 1)}, 8333, 0))
		}
		hdrs := wire.NewMsgHeaders()
		hdrs.AddBlockHeader(&wire.BlockHeader{Version: 1, Timestamp: time.Unix(1, 0)})
		return []wire.Message{inv, wire.NewMsgPing(uint64(len(cf.Data))), hdrs, addrs, cf}
	}
	other := hashes[answerLen-1]
	tests := []struct {
		name    string
		lie     peertest.LieFunc
		opts    []peertest.LiarOption
		wantErr error  // nil: every filter, each once and true
		names   string // what the error must say
		served  int    // the filters the callback must get before the error, or -1
	}{
		{name: "interleaves inv, ping, headers and addr", lie: afterFilters(0, flood)},
		{name: "drips within the timeout", opts: []peertest.LiarOption{peertest.Drips(wire.CmdCFilter, 0, -1)}},
		{name: "stalls between filters", lie: afterFilters(k, func(*wire.MsgCFilter) []wire.Message { return nil }),
			wantErr: ErrStalled, names: "no complete answer", served: k},
		{name: "stalls inside a filter after its header", opts: []peertest.LiarOption{peertest.Drips(wire.CmdCFilter, 0, wire.MessageHeaderSize+10)},
			wantErr: ErrStalled, served: 0},
		{name: "filter of another block", lie: afterFilters(k, func(cf *wire.MsgCFilter) []wire.Message {
			return []wire.Message{wire.NewMsgCFilter(cf.FilterType, &other, cf.Data)}
		}), wantErr: ErrBadFilter, names: fmt.Sprintf("(height %d)", k), served: k},
		{name: "drips slower than the timeout", opts: []peertest.LiarOption{peertest.Drips(wire.CmdCFilter, 5*time.Millisecond, -1)},
			wantErr: ErrStalled, names: "no complete answer", served: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, tt.lie, tt.opts...)
			p, a := getFilters(t, l.Addr, timeout, hashes)
			if a.late.Load() {
				t.Error("a callback ran after GetCFilters returned")
			}
			if tt.wantErr == nil {
				if a.err != nil {
					t.Fatalf("%v after %d filters", a.err, len(a.got))
				}
				if len(a.got) != answerLen {
					t.Fatalf("%d filters, want %d", len(a.got), answerLen)
				}
				for i := range a.got {
					if !bytes.Equal(a.got[i], want[i]) {
						t.Fatalf("filter %d is %x, the node's %x", i, a.got[i], want[i])
					}
				}
				select {
				case <-p.Done():
					t.Fatalf("the connection ended: %v", p.Err())
				case <-time.After(100 * time.Millisecond):
				}
				return
			}
			checkPeerError(t, a.err, l.Addr, tt.wantErr)
			if !strings.Contains(a.err.Error(), tt.names) {
				t.Errorf("error %q does not say %q", a.err, tt.names)
			}
			if tt.served >= 0 && len(a.got) != tt.served {
				t.Errorf("%d filters served before the error, want %d", len(a.got), tt.served)
			}
			if tt.wantErr == ErrStalled && a.elapsed > timeout+timeout/5 {
				t.Errorf("the request ended %v after it was sent, the timeout is %v", a.elapsed, timeout)
			}
			select {
			case <-p.Done():
			case <-time.After(timeout):
				t.Fatal("the connection outlived the failed request")
			}
			if !errors.Is(p.Err(), tt.wantErr) && !errors.Is(p.Err(), ErrDisconnected) {
				t.Logf("connection ended with %v", p.Err())
			}
		})
	}
}
