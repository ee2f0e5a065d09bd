package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestWatchCheckWithin: btcd behind a proxy that treats the watch
// connection as kind says; the node announces the transaction given it
// on another connection, and the watch checks the announcement. A
// getdata never passed on ends the check CheckWithin after it was
// written, with an *UnservedAnnounceError (ErrStalled, no lie) and the
// watch's connection closed; without the option it ends at the
// connection's timeout, as before. An answer within the bound is judged
// as ever: served, a sighting; another transaction served a second late,
// a false announcement.
func TestWatchCheckWithin(t *testing.T) {
	needFixture(t)
	const timeout = 3 * time.Second
	other := bigTx(200)
	tests := []struct {
		name     string
		kind     peertest.WatchKind
		within   time.Duration // 0: no CheckWithin
		sighting bool
		want     error         // nil with sighting
		took     time.Duration // from the getdata written to the verdict, at least
	}{
		{"unserved, bounded", peertest.WatchWithholds, time.Second, false, ErrStalled, time.Second},
		{"unserved, timeout", peertest.WatchWithholds, 0, false, ErrStalled, timeout},
		{"bound past the timeout", peertest.WatchWithholds, time.Hour, false, ErrStalled, timeout},
		{"served", peertest.WatchPasses, time.Second, true, nil, 0},
		{"other served within the bound", peertest.WatchServesLate, 2 * time.Second, false, ErrFalseAnnouncement, peertest.WatchServeDelay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := peertest.NewWatchProxy(t, fx.node.P2PAddr, fx.node.Params.Net, tt.kind, other)
			tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript()))
			if !waitFor(func() bool { return relaying(t) == 0 }) {
				t.Fatal("the node still relays to another test's connection")
			}
			var opts []WatchOption
			if tt.within > 0 {
				opts = append(opts, CheckWithin(tt.within))
			}
			w, err := WatchTx(context.Background(), Config{Addr: proxy.Addr, Params: fx.node.Params, Timeout: timeout}, tx.TxHash(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if !waitFor(func() bool { return relaying(t) == 1 }) {
				t.Fatal("the node does not relay to the watch")
			}
			p := dial(t, fx.node.P2PAddr, 5*time.Second)
			if err := p.Broadcast(context.Background(), tx); err != nil {
				t.Fatalf("broadcast: %v", err)
			}
			defer fx.confirm(t, tx)
			s, err := waitSighting(t, w, 2*timeout+2*time.Second)
			done := time.Now()
			heard, asked := w.HeardAt(), w.AskedAt()
			if heard.IsZero() || asked.IsZero() || asked.Before(heard) {
				t.Fatalf("heard at %v, asked at %v: want both, asked after heard", heard, asked)
			}
			took := done.Sub(asked)
			t.Logf("%v: checked %v after the getdata was written (%v after the announcement): %+v, %v",
				tt.name, took.Round(time.Millisecond), done.Sub(heard).Round(time.Millisecond), s, err)
			if tt.sighting {
				if err != nil || s == nil || s.Txid != tx.TxHash() {
					t.Fatalf("sighting %+v, %v: want one", s, err)
				}
				if took > time.Second {
					t.Errorf("served, checked after %v", took)
				}
				return
			}
			checkPeerError(t, err, proxy.Addr, tt.want)
			if s != nil {
				t.Fatalf("a sighting %+v beside %v", s, err)
			}
			if took < tt.took-50*time.Millisecond || took > tt.took+500*time.Millisecond {
				t.Errorf("the check ended %v after the getdata was written, want %v", took, tt.took)
			}
			var ue *UnservedAnnounceError
			unserved := errors.As(err, &ue)
			if unserved != errors.Is(tt.want, ErrStalled) {
				t.Fatalf("error %v: unserved %v, want %v", err, unserved, !unserved)
			}
			if !unserved {
				return
			}
			var te *TimeoutError
			if ue.Txid != tx.TxHash() || ue.Within != tt.took || !errors.As(err, &te) || errors.Is(err, ErrFalseAnnouncement) || errors.Is(err, ErrProtocol) {
				t.Fatalf("unserved %+v: want txid %v, within %v, a *TimeoutError and no lie", ue, tx.TxHash(), tt.took)
			}
			if !waitFor(func() bool { return proxy.Open() == 0 }) {
				t.Errorf("the watch's connection is still open (%d)", proxy.Open())
			}
		})
	}
}

// TestBroadcastUntilUnservedCheck: a lone Core-like node (no verdict of
// its own, announcements on a 1.5 s tick) whose announcement connection
// drops the watch's getdata. BroadcastUntil reports no verdict either
// way (an unanswered check counts for nothing). Without CheckWithin the
// watch's check ends the timeout after the announcement, past the
// broadcast, which ends at the timeout. With it the check ends within
// its bound, and the broadcast with it, saying why (Unserved): the
// node's announcement was the one word it gives, and its mempool would
// tell nothing within the timeout; before, it waited out the timeout
// anyway (3.01 s, the check ending at 2.50 s), now 2.50 s.
func TestBroadcastUntilUnservedCheck(t *testing.T) {
	needFixture(t)
	const timeout, tick = 3 * time.Second, 1500 * time.Millisecond
	tests := []struct {
		name   string
		within time.Duration // 0: no CheckWithin
		check  time.Duration // from the getdata written to the watch's end
	}{
		{"timeout", 0, timeout},
		{"bounded", time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := peertest.NewCoreLike(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.CoreLikeTicks(tick))
			proxy := peertest.NewWatchProxy(t, core.Addr, fx.node.Params.Net, peertest.WatchWithholds, nil)
			tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript()))
			defer fx.confirm(t, tx)
			var opts []WatchOption
			if tt.within > 0 {
				opts = append(opts, CheckWithin(tt.within))
			}
			w, err := WatchTx(context.Background(), Config{Addr: proxy.Addr, Params: fx.node.Params, Timeout: timeout}, tx.TxHash(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			p := dial(t, proxy.Addr, timeout)
			watchEnd := make(chan time.Time, 1)
			go func() {
				<-w.Done()
				watchEnd <- time.Now()
			}()
			start := time.Now()
			s, _, err := p.BroadcastUntil(context.Background(), tx, w, nil)
			broadcast := time.Since(start)
			var nv *NoVerdictError
			if s != nil || !errors.As(err, &nv) {
				t.Fatalf("sighting %+v, error %v: want no verdict", s, err)
			}
			_, werr := waitSighting(t, w, 2*timeout)
			ended := (<-watchEnd).Sub(start)
			asked := w.AskedAt()
			t.Logf("%s: broadcast %v (%v); heard %v, watch ended %v, %v after its getdata: %v", tt.name, broadcast.Round(time.Millisecond), err,
				w.HeardAt().Sub(start).Round(time.Millisecond), ended.Round(time.Millisecond), (start.Add(ended)).Sub(asked).Round(time.Millisecond), werr)
			var ue *UnservedAnnounceError
			if asked.IsZero() || !errors.As(werr, &ue) || ue.Within != tt.check {
				t.Fatalf("watch: %v (asked at %v): want an unserved announcement within %v", werr, asked, tt.check)
			}
			if got := start.Add(ended).Sub(asked); got < tt.check-50*time.Millisecond || got > tt.check+500*time.Millisecond {
				t.Errorf("the check ended %v after its getdata, want %v", got, tt.check)
			}
			if tt.within > 0 && ended > broadcast {
				t.Errorf("the bounded check ended %v in, after the broadcast (%v)", ended, broadcast)
			}
			if (nv.Unserved != nil) != (tt.within > 0) || nv.Unserved != nil && nv.Unserved != ue {
				t.Errorf("no verdict %+v: want the watch's unserved check %t as its cause", nv, tt.within > 0)
			}
			// Without the bound the broadcast waits out the timeout; with
			// it, it ends once the check failed.
			if want := timeout; tt.within > 0 && broadcast > ended+500*time.Millisecond || tt.within == 0 && broadcast < want {
				t.Errorf("the broadcast ended %v in, the check %v: want it ended by the bounded check, else at the timeout %v", broadcast, ended, want)
			}
		})
	}
}
