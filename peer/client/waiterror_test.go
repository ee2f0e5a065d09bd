package client

import (
	"context"
	"errors"
	"testing"
)

// TestWaitErrorIs: a following rescan stopped while it waited for a peer
// is an ErrNoPeers and the context's error, so that a caller that ended
// it (a signal) tells it from a deadline.
func TestWaitErrorIs(t *testing.T) {
	for _, tt := range []struct {
		cause            error
		canceled, passed bool
	}{
		{context.Canceled, true, false},
		{context.DeadlineExceeded, false, true},
	} {
		err := error(&WaitError{Height: 7, For: "filters", Peers: "none", Cause: tt.cause})
		if !errors.Is(err, ErrNoPeers) {
			t.Errorf("%v: not an ErrNoPeers", err)
		}
		if errors.Is(err, context.Canceled) != tt.canceled || errors.Is(err, context.DeadlineExceeded) != tt.passed {
			t.Errorf("cause %v: errors.Is Canceled %v, DeadlineExceeded %v", tt.cause, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded))
		}
	}
}
