package pool

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
)

// TestStatusKeepsTheError: a member that could not be reached keeps, in
// its Status, the error its Reason says, so that a caller tells the
// user why with the peer package's typed errors rather than from the
// text: a port nothing listens on (a *net.OpError of the dial), a proxy
// that cannot be reached (a *peer.ProxyError).
func TestStatusKeepsTheError(t *testing.T) {
	const nobody = "127.0.0.1:1" // nothing listens on port 1
	proxy, err := peer.SOCKS5("socks5://" + nobody)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		dial peer.DialFunc
		want func(error) bool
	}{
		{"refused", nil, func(err error) bool { var oe *net.OpError; return errors.As(err, &oe) && oe.Op == "dial" }},
		{"proxy down", proxy, func(err error) bool { var px *peer.ProxyError; return errors.As(err, &px) && px.Proxy == nobody }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := New(Config{Params: &chaincfg.RegressionNetParams, Peers: []string{nobody}, ConnectOnly: true, Timeout: 5 * time.Second, Dial: tt.dial})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.Connect(context.Background())
			st := p.Status(p.Members()[0])
			var pe *peer.PeerError
			if st.Live || st.Reason == "" || !errors.As(st.Err, &pe) || pe.Op != peer.OpConnect || pe.Peer != nobody || !tt.want(st.Err) {
				t.Errorf("status %+v: want the dial's typed error beside its reason", st)
			}
		})
	}
}
