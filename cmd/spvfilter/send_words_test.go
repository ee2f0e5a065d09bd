package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// TestAnnouncedWords: a peer's announcement is printed with on whose
// word it rests: the peer's own when the transaction was given to it,
// the network's when it was not (it propagated).
func TestAnnouncedWords(t *testing.T) {
	tests := []struct {
		name string
		res  client.SendResult
		want string
	}{
		{"given", client.SendResult{Given: []string{"127.0.0.1:1"}, Accepted: []string{"127.0.0.1:1"},
			Announced: map[string]time.Duration{"127.0.0.1:1": 102 * time.Millisecond}},
			"127.0.0.1:1 after 102ms (given it: on its own word)"},
		{"propagated", client.SendResult{Given: []string{"127.0.0.1:1", "127.0.0.1:2"}, Accepted: []string{"127.0.0.1:1", "127.0.0.1:2"},
			Seen:      []string{"127.0.0.1:2"},
			Announced: map[string]time.Duration{"127.0.0.1:1": 5 * time.Second, "127.0.0.1:2": 260 * time.Millisecond}},
			"127.0.0.1:1 after 5s (given it: on its own word), 127.0.0.1:2 after 260ms (not given it: it propagated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := announcedWords(&tt.res); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestSendWordsNotConfirmed: a peer that gave no verdict of its own (a
// node that is not btcd, silent on the transaction) is said to be not
// confirmed, in the words the help uses, never to have dropped or
// rejected the transaction; a rejection beside it keeps its words. A
// send none of whose peers confirmed it (client.NoneConfirmedError) is
// said so, with what to do, even wrapped (before, only an error whose
// text began with the client's words was).
func TestSendWordsNotConfirmed(t *testing.T) {
	txid := chainhash.Hash{1}
	silent := &client.NotConfirmedError{Peer: "127.0.0.1:1", Txid: txid, Waited: 30*time.Second + 40*time.Millisecond, Watched: true,
		Cause: &peer.PeerError{Peer: "127.0.0.1:1", Op: "tx", Err: &peer.NoVerdictError{Txid: txid, Requested: true, Waited: 30 * time.Second}}}
	unwatched := &client.NotConfirmedError{Peer: "127.0.0.1:2", Txid: txid, Waited: 10 * time.Second}
	lost := &client.NotConfirmedError{Peer: "127.0.0.1:2", Txid: txid, Waited: 3 * time.Second,
		WatchLost: &peer.PeerError{Peer: "127.0.0.1:2", Op: "watch tx", Err: peer.ErrFlooding}}
	proven := &client.NotConfirmedError{Peer: "127.0.0.1:4", Txid: txid, Waited: 120 * time.Millisecond, Watched: true, Proven: true}
	rejected := &peer.PeerError{Peer: "127.0.0.1:3", Op: "tx", Err: &peer.RejectError{Kind: peer.RejectInvalid, Reason: "bad-txns"}}
	tests := []struct {
		name string
		err  error
		want []string
		not  []string
	}{
		{"alone", &client.NoneConfirmedError{Txid: txid, Peers: []error{silent}},
			[]string{"no peer confirmed transaction", "peer 127.0.0.1:1: not confirmed (Core announces on average every 5 s; it does not say when it refuses)", "did not announce it within 30s",
				"run send again later"},
			[]string{"dropped", "rejected", "client:"}},
		{"alone, wrapped", fmt.Errorf("sending: %w", &client.NoneConfirmedError{Txid: txid, Peers: []error{silent, unwatched}}),
			[]string{"sending: no peer confirmed transaction", "peer 127.0.0.1:1: not confirmed (Core", "peer 127.0.0.1:2: not confirmed (Core", "could not be watched",
				"run send again later"},
			[]string{"dropped", "rejected", "client:"}},
		{"unwatched", unwatched, []string{"not confirmed", "could not be watched"}, []string{"did not announce"}},
		{"watch lost", lost, []string{"not confirmed", "could not announce it: its second connection ended", peer.ErrFlooding.Error()}, []string{"did not announce"}},
		{"proven", proven, []string{"not confirmed, not needed", "another peer proved it propagated", "within 100ms"}, []string{"refuses"}},
		{"beside a rejection", fmt.Errorf("client: no peer took transaction %v: %w", txid, errors.Join(silent, rejected)),
			[]string{"no peer took transaction", "127.0.0.1:1: not confirmed", "peer 127.0.0.1:3 rejected it as"}, []string{"dropped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sendWords(tt.err)
			for _, w := range tt.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("%q\nlacks %q", got, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got.Error(), w) {
					t.Errorf("%q\nsays %q", got, w)
				}
			}
			if !errors.Is(got, client.ErrNotConfirmed) || errors.Is(tt.err, peer.ErrRejected) != (tt.name == "beside a rejection") {
				t.Errorf("%v: the cause is not kept", got)
			}
		})
	}
}

// TestSendLeftOutSaid: a peer the send left out before it began
// (client.SendResult.LeftOut) is named, with why, in the warnings and
// in its --json entry, not only in the log; a peer given the
// transaction is not.
func TestSendLeftOutSaid(t *testing.T) {
	why := fmt.Errorf("pool: 127.0.0.1:2 not dialled again: the next is due in 7.9s: %w", peer.ErrAbandoned)
	res := &client.SendResult{Given: []string{"127.0.0.1:1"}, Accepted: []string{"127.0.0.1:1"},
		LeftOut: map[string]error{"127.0.0.1:2": why}}
	peers := []client.PeerStatus{{Address: "127.0.0.1:1"}, {Address: "127.0.0.1:2"}}
	tests := []struct {
		addr string
		want string // in the peer's warning and its JSON error; "" for none
	}{
		{"127.0.0.1:1", ""},
		{"127.0.0.1:2", "peer 127.0.0.1:2: not given the transaction: its connection had ended and it was not dialled again in time (" + why.Error() + ")"},
	}
	_, warnings := sendVerdict(res, peers, &chaincfg.RegressionNetParams)
	js := newSendJSON(res, peers, &chaincfg.RegressionNetParams, false, warnings)
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			var said []string
			for _, w := range warnings {
				if strings.Contains(w, tt.addr) {
					said = append(said, w)
				}
			}
			var jerr *string
			for _, p := range js.Peers {
				if p.Address == tt.addr {
					jerr = p.Error
				}
			}
			if tt.want == "" {
				if len(said) != 0 || jerr != nil {
					t.Errorf("warned %q, json error %v; want neither", said, jerr)
				}
				return
			}
			if len(said) != 1 || !strings.HasPrefix(said[0], tt.want) {
				t.Errorf("warnings %q; want one starting %q", said, tt.want)
			}
			if jerr == nil || !strings.HasPrefix(*jerr, tt.want) {
				t.Errorf("json error %v; want one starting %q", jerr, tt.want)
			}
		})
	}
}
