package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// ErrUpstream reports an upstream node that does not answer as a node of
// the expected network.
var ErrUpstream = errors.New("privacy: upstream node does not answer")

// CheckUpstream connects to the node at addr, sends a version message and
// waits for the node's version, within timeout (10s if zero). A relay that
// starts listening in front of a node that is down, or not a node of net,
// would only record clients that give up.
func CheckUpstream(ctx context.Context, addr string, netMagic wire.BitcoinNet, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUpstream, addr, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), 0, 0)
	v.UserAgent = "/spvfilter-capture-check:0/"
	v.DisableRelayTx = true
	if err := wire.WriteMessage(c, v, wire.ProtocolVersion, netMagic); err != nil {
		return fmt.Errorf("%w: %s: sending version: %w", ErrUpstream, addr, err)
	}
	for i := 0; i < 16; i++ {
		// Reading through the relay's strict framing: the node must speak
		// the network's magic.
		cmd, err := readUpstreamCommand(c, netMagic)
		if err != nil {
			return fmt.Errorf("%w: %s: no version message in answer: %w", ErrUpstream, addr, err)
		}
		if cmd == wire.CmdVersion {
			return nil
		}
	}
	return fmt.Errorf("%w: %s: no version message among its first messages", ErrUpstream, addr)
}

func readUpstreamCommand(c net.Conn, netMagic wire.BitcoinNet) (string, error) {
	var hdr [frameHeaderSize]byte
	var payload bytes.Buffer
	return readFrame(c, netMagic, &hdr, &payload)
}
