package notify

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// logWriter is an io.Writer into the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// confirmOn registers a confirmation of one block on n (as
// RegisterConfirmations does, without a rescan) and has the transaction
// mined in block 100, which a reorganization replaces by another block 100
// holding it too: the confirmation, the negative confirmation and the
// second confirmation are sent (the channels hold one each: a reader that
// does not read leaves the second confirmation waiting).
func confirmOn(t *testing.T, n *Notifier) (*confReg, *ConfirmationEvent, chainhash.Hash) {
	t.Helper()
	script := []byte{0x51}
	tx := wire.NewMsgTx(2)
	tx.AddTxOut(wire.NewTxOut(1000, script))
	txid := tx.TxHash()
	r := newConfReg(&txid, script, 1, n.opt.ReorgSafety, n.dropConf, n.delivery())
	n.mu.Lock()
	n.confs[r] = true
	a, b := chainhash.Hash{0xa}, chainhash.Hash{0xb}
	for _, e := range []client.Event{
		{Kind: client.EventMatch, Height: 100, BlockHash: a, Match: &client.Match{Txid: txid, Tx: tx, Height: 100, BlockHash: a}},
		{Kind: client.EventConnected, Height: 100, BlockHash: a},
		{Kind: client.EventDisconnected, Height: 100, BlockHash: a},
		{Kind: client.EventMatch, Height: 100, BlockHash: b, Match: &client.Match{Txid: txid, Tx: tx, Height: 100, BlockHash: b}},
		{Kind: client.EventConnected, Height: 100, BlockHash: b},
	} {
		n.handleLocked(e)
	}
	n.mu.Unlock()
	return r, r.event(), txid
}

// TestReaderStallVisibleThenBounded: a reader that does not take its
// confirmation is listed by Stalls, named and with the time the
// confirmation began to wait, while it waits; after MaxReaderWait its
// registration is cancelled (the channels close) and the event's Err says
// why, a *StallError.
func TestReaderStallVisibleThenBounded(t *testing.T) {
	const maxWait = 3 * time.Second
	n := New(nil, Options{ReorgSafety: 6, MaxReaderWait: maxWait, Log: logWriter{t}})
	before := time.Now()
	_, ev, txid := confirmOn(t, n)
	time.Sleep(maxWait / 3)
	stalls := n.Stalls(maxWait / 15)
	if len(stalls) != 1 {
		t.Fatalf("a confirmation waiting up to %v for its reader: Stalls(%v) lists %v, want it", maxWait/3, maxWait/15, stalls)
	}
	s := stalls[0]
	if s.Kind != StallReader || !strings.Contains(s.Registration, txid.String()) || s.Since.Before(before) {
		t.Errorf("stall %+v: want the reader of the confirmation of %v, waiting since the block was connected", s, txid)
	}
	if len(n.Stalls(time.Hour)) != 0 {
		t.Errorf("Stalls(1h) lists a confirmation held up %v", maxWait/3)
	}
	select {
	case <-ev.Done:
	case <-time.After(10 * maxWait):
		t.Fatalf("the registration of a reader that does not read is still open after %v (MaxReaderWait %v)", 10*maxWait, maxWait)
	}
	var se *StallError
	if err := ev.Err(); !errors.As(err, &se) || se.Kind != StallReader || se.Pending != 1 || !strings.Contains(err.Error(), txid.String()) || se.At.Sub(se.Since) < maxWait {
		t.Errorf("Err after the stall: %v, want a *StallError of the reader naming %v", err, txid)
	}
	if s := n.Stalls(0); len(s) != 0 {
		t.Errorf("after the registration was cancelled, Stalls still lists %v", s)
	}
}

// TestReaderThatReadsIsNoStall: a reader that takes its confirmation in
// time is never listed, and its registration's Err stays nil.
func TestReaderThatReadsIsNoStall(t *testing.T) {
	n := New(nil, Options{ReorgSafety: 6, MaxReaderWait: time.Second, Log: logWriter{t}})
	r, ev, _ := confirmOn(t, n)
	defer r.cancel()
	for range 2 {
		select {
		case <-ev.Confirmed:
		case <-time.After(5 * time.Second):
			t.Fatal("no confirmation")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if s := n.Stalls(0); len(s) != 0 {
		t.Errorf("Stalls lists %v after the reader took its confirmation", s)
	}
	if err := ev.Err(); err != nil {
		t.Errorf("Err: %v, want nil", err)
	}
}

// TestReaderFarBehindStalls: notifications piled up beyond maxPending
// cancel the registration at once, whatever MaxReaderWait, and Err says
// how many waited.
func TestReaderFarBehindStalls(t *testing.T) {
	n := New(nil, Options{ReorgSafety: 6, MaxReaderWait: time.Hour, Log: logWriter{t}})
	r, ev, _ := confirmOn(t, n)
	n.mu.Lock()
	for range maxPending + 1 {
		r.post(send(r.negative, 1), false)
	}
	n.mu.Unlock()
	select {
	case <-ev.Done:
	case <-time.After(5 * time.Second):
		t.Fatalf("a reader %d notifications behind still registered", maxPending+1)
	}
	var se *StallError
	if err := ev.Err(); !errors.As(err, &se) || se.Kind != StallReader || se.Pending != maxPending+1 {
		t.Errorf("Err: %v, want a *StallError of the reader with %d waiting", err, maxPending+1)
	}
}
