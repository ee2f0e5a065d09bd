package peer

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// heapPeak samples the Go heap in use every 10 ms until stop is
// called, which returns the largest sample.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// relaying returns how many of the fixture node's peers asked it to
// relay transactions.
func relaying(t *testing.T) int {
	infos, err := fx.node.RPC().GetPeerInfo()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, info := range infos {
		if info.RelayTxes {
			n++
		}
	}
	return n
}

// bigTx returns a transaction of about size bytes (one output script
// that large), whose txid is not any the node holds.
func bigTx(size int) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 7}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(1, make([]byte, size)))
	return tx
}

// TestWatchAttacks: a node lying on the announcement connection alone,
// the client's own connection honest. Its watch ends with a named error
// and no sighting, within a second, and the heap stays bounded: a flood
// of invs of other txids (50,000 each, without end) is ErrFlooding (no
// transaction sent: the flood decides alone); the
// node's announcements repeated 1,000 times give one sighting; a
// transaction of 3.9 MB served for the txid asked is a false
// announcement naming what was served; one of 4.1 MB is refused from its
// header (an *OversizeError, a protocol violation).
func TestWatchAttacks(t *testing.T) {
	needFixture(t)
	huge, over := bigTx(3_900_000), bigTx(4_100_000)
	tests := []struct {
		name     string
		kind     peertest.WatchKind
		serve    *wire.MsgTx
		sighting bool
		want     error
	}{
		{"flood of other txids", peertest.WatchFloods, nil, false, ErrFlooding},
		{"announcement repeated", peertest.WatchRepeats, nil, true, nil},
		{"3.9 MB transaction served", peertest.WatchServes, huge, false, ErrFalseAnnouncement},
		{"4.1 MB transaction served", peertest.WatchServes, over, false, ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := peertest.NewWatchProxy(t, fx.node.P2PAddr, fx.node.Params.Net, tt.kind, tt.serve)
			tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript()))
			runtime.GC()
			stop := heapPeak()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			if !waitFor(func() bool { return relaying(t) == 0 }) {
				t.Fatal("the node still relays to another test's connection")
			}
			w := watchTx(t, fx.node, proxy.Addr, tx)
			start := time.Now()
			if tt.want != ErrFlooding {
				// btcd adds a peer to those it relays to a moment
				// after the handshake.
				if !waitFor(func() bool { return relaying(t) == 1 }) {
					t.Fatal("the node does not relay to the watch")
				}
				p := dial(t, fx.node.P2PAddr, 5*time.Second)
				start = time.Now()
				if err := p.Broadcast(context.Background(), tx); err != nil {
					t.Fatal(err)
				}
				defer fx.confirm(t, tx)
			}
			s, err := waitSighting(t, w, 5*time.Second)
			took := time.Since(start)
			if tt.sighting {
				// Later repeats of the announcement change nothing.
				time.Sleep(300 * time.Millisecond)
				s, err = w.Result()
			}
			peak := stop()
			t.Logf("after %v: sighting %+v, %v; heap in use %.1f MB before, %.1f MB at most", took.Round(time.Millisecond), s, err,
				float64(before.HeapInuse)/1e6, float64(peak)/1e6)
			if tt.sighting {
				if err != nil || s == nil || s.Txid != tx.TxHash() || s.Peer != proxy.Addr {
					t.Fatalf("sighting %+v, %v: want one sighting", s, err)
				}
			} else {
				checkPeerError(t, err, proxy.Addr, tt.want)
				if s != nil {
					t.Fatalf("a sighting %+v beside %v", s, err)
				}
			}
			var fe *FalseAnnounceError
			if errors.As(err, &fe) && (fe.Served == nil || *fe.Served != tt.serve.TxHash()) {
				t.Errorf("false announcement %v: want it to name %v, served", fe, tt.serve.TxHash())
			}
			if took > time.Second {
				t.Errorf("the verdict took %v", took)
			}
			if grown := int64(peak) - int64(before.HeapInuse); grown > 64<<20 {
				t.Errorf("the heap grew by %.1f MB", float64(grown)/1e6)
			}
		})
	}
}
