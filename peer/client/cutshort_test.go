package client

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
)

// TestCutShortErrorKeepsBoth: a peer whose ask was cut short and whose
// connection then failed is reported with both errors: its cause (the
// unanswered ask, a *peer.TimeoutError) and what failed next (wrapping
// peer.ErrDisconnected), each found by errors.As and errors.Is, wrapped
// or not, and both in its text.
func TestCutShortErrorKeepsBoth(t *testing.T) {
	cut := &peer.PeerError{Peer: "127.0.0.1:1", Op: "getdata tx", Err: &peer.TimeoutError{What: "no answer whether it holds the transaction", Within: 2 * time.Second}}
	next := &peer.PeerError{Peer: "127.0.0.1:1", Op: "inv tx", Err: fmt.Errorf("%w: connection dropped after an earlier error", peer.ErrDisconnected)}
	tests := []struct {
		name string
		err  error
	}{
		{name: "alone", err: &CutShortError{Cut: cut, Err: next}},
		{name: "wrapped", err: fmt.Errorf("send: %w", &CutShortError{Cut: cut, Err: next})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var te *peer.TimeoutError
			if !errors.As(tt.err, &te) || te.Within != 2*time.Second {
				t.Errorf("%v: no *peer.TimeoutError of 2s found", tt.err)
			}
			if !errors.Is(tt.err, peer.ErrDisconnected) {
				t.Errorf("%v: not peer.ErrDisconnected", tt.err)
			}
			if s := tt.err.Error(); !strings.Contains(s, "no answer whether it holds") || !strings.Contains(s, "connection dropped after an earlier error") {
				t.Errorf("%q: want both failures in the text", s)
			}
		})
	}
}
