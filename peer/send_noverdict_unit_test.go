package peer

import (
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestNoVerdictError: the one constructor of a broadcast's
// *NoVerdictError names the node (a *PeerError of op "tx"), the
// transaction, whether the node asked for it (while it was announced,
// or by a getdata since), how long it was waited for since it was
// given, and whether the caller ended the wait.
func TestNoVerdictError(t *testing.T) {
	txid := chainhash.Hash{7}
	tests := []struct {
		name                          string
		requested, askedLater, enough bool
		wantRequested                 bool
	}{
		{"not asked, timeout", false, false, false, false},
		{"asked while announced", true, false, false, true},
		{"asked later", false, true, false, true},
		{"caller ended the wait", false, false, true, false},
		{"asked, caller ended the wait", true, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Peer{cfg: Config{Addr: "127.0.0.1:1"}, offers: map[chainhash.Hash]*offer{txid: {once: tt.askedLater}}}
			const waited = 30 * time.Millisecond
			given := time.Now().Add(-waited)
			err := p.noVerdict(txid, tt.requested, given, tt.enough)
			var pe *PeerError
			var nv *NoVerdictError
			if !errors.As(err, &pe) || pe.Peer != "127.0.0.1:1" || pe.Op != "tx" || !errors.As(err, &nv) || !errors.Is(err, ErrNoVerdict) || errors.Is(err, ErrRejected) {
				t.Fatalf("%v: want a *PeerError of op tx for 127.0.0.1:1 wrapping a *NoVerdictError", err)
			}
			if nv.Txid != txid || nv.Requested != tt.wantRequested || nv.Enough != tt.enough || nv.Waited < waited || nv.Waited > time.Second {
				t.Errorf("%+v: want txid %v, requested %t, enough %t, waited from %v", nv, txid, tt.wantRequested, tt.enough, waited)
			}
		})
	}
}
