package client

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestPeerStatusErr: a peer that could not be reached has, beside the
// text of its Reason, the error it says, which errors.As and errors.Is
// find (the peer package's *PeerError of the dial, a refused connection);
// a peer in use has none.
func TestPeerStatusErr(t *testing.T) {
	refused := peertest.ClosedAddr(t)
	c := connect(t, 5*time.Second, fx.node.P2PAddr, refused)
	for _, st := range c.Peers() {
		switch st.Address {
		case fx.node.P2PAddr:
			if st.Err != nil || st.Reason != "" {
				t.Errorf("peer in use: reason %q, error %v", st.Reason, st.Err)
			}
		case refused:
			var pe *peer.PeerError
			if st.Reason == "" || !errors.As(st.Err, &pe) || pe.Peer != refused || pe.Op != peer.OpConnect ||
				!errors.Is(st.Err, peer.ErrDisconnected) || !errors.Is(st.Err, syscall.ECONNREFUSED) {
				t.Errorf("unreachable peer: reason %q, error %#v", st.Reason, st.Err)
			}
		default:
			t.Errorf("peer %s not given", st.Address)
		}
	}
}
