package peer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestNoVerdictError: the one constructor of a broadcast's
// *NoVerdictError names the node (a *PeerError of op "tx"), the
// transaction, whether the node asked for it (while it was announced,
// or by a getdata since), how long it was waited for since it was
// given, whether the caller ended the wait, and the watch's unserved
// check that ended it, named in its message.
func TestNoVerdictError(t *testing.T) {
	txid := chainhash.Hash{7}
	tests := []struct {
		name                          string
		requested, askedLater, enough bool
		unserved                      bool
		wantRequested                 bool
	}{
		{"not asked, timeout", false, false, false, false, false},
		{"asked while announced", true, false, false, false, true},
		{"asked later", false, true, false, false, true},
		{"caller ended the wait", false, false, true, false, false},
		{"asked, caller ended the wait", true, true, true, false, true},
		{"asked, announcement unserved", true, false, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Peer{cfg: Config{Addr: "127.0.0.1:1"}, offers: map[chainhash.Hash]*offer{txid: {once: tt.askedLater}}}
			const waited = 30 * time.Millisecond
			given := time.Now().Add(-waited)
			var u *UnservedAnnounceError
			if tt.unserved {
				u = &UnservedAnnounceError{Txid: txid, Within: 2 * time.Second, Err: &TimeoutError{}}
			}
			err := p.noVerdict(txid, tt.requested, given, tt.enough, u)
			var pe *PeerError
			var nv *NoVerdictError
			if !errors.As(err, &pe) || pe.Peer != "127.0.0.1:1" || pe.Op != "tx" || !errors.As(err, &nv) || !errors.Is(err, ErrNoVerdict) || errors.Is(err, ErrRejected) {
				t.Fatalf("%v: want a *PeerError of op tx for 127.0.0.1:1 wrapping a *NoVerdictError", err)
			}
			if nv.Txid != txid || nv.Requested != tt.wantRequested || nv.Enough != tt.enough || nv.Waited < waited || nv.Waited > time.Second {
				t.Errorf("%+v: want txid %v, requested %t, enough %t, waited from %v", nv, txid, tt.wantRequested, tt.enough, waited)
			}
			if nv.Unserved != u || strings.Contains(err.Error(), "served nothing within 2s") != tt.unserved || errors.Is(err, ErrStalled) {
				t.Errorf("%v (unserved %+v): want the unserved announcement %t named, kept out of the chain", err, nv.Unserved, tt.unserved)
			}
		})
	}
}
