package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// ErrUpstream reports an upstream node that does not answer as a node of
// the expected network.
var ErrUpstream = errors.New("privacy: upstream node does not answer")

// UpstreamProblem is how an upstream node failed CheckUpstream.
type UpstreamProblem int

// The ways an upstream node fails CheckUpstream.
const (
	// UpstreamUnreachable: the connection could not be made (Err is the
	// dialer's error).
	UpstreamUnreachable UpstreamProblem = iota + 1
	// UpstreamHungUp: it closed the connection before its version message.
	UpstreamHungUp
	// UpstreamSilent: no version message came within the time given.
	UpstreamSilent
	// UpstreamOtherNetwork: it answers with another network's magic (Got).
	UpstreamOtherNetwork
	// UpstreamNotANode: it answers with what is no message, or with
	// messages none of which is its version.
	UpstreamNotANode
	// UpstreamEcho: the version message that came back is the one sent,
	// its nonce the same: a TCP echo service, or a connection that loops
	// back, and no node.
	UpstreamEcho
)

// UpstreamError is an upstream node that does not answer as a node of the
// network: its address, the problem, the magic it answered with (for
// UpstreamOtherNetwork) and the cause. It wraps ErrUpstream and Err.
type UpstreamError struct {
	Addr    string
	Problem UpstreamProblem
	Got     wire.BitcoinNet
	Err     error
}

func (e *UpstreamError) Error() string {
	if e.Problem == UpstreamEcho {
		return fmt.Sprintf("%v: %s: it sent back the version message it was sent (an echo service, no node)", ErrUpstream, e.Addr)
	}
	if e.Err == nil {
		return fmt.Sprintf("%v: %s: no version message among its first messages", ErrUpstream, e.Addr)
	}
	if e.Problem == UpstreamUnreachable {
		return fmt.Sprintf("%v: %s: %v", ErrUpstream, e.Addr, e.Err)
	}
	return fmt.Sprintf("%v: %s: no version message in answer: %v", ErrUpstream, e.Addr, e.Err)
}

// Unwrap returns ErrUpstream and the cause.
func (e *UpstreamError) Unwrap() []error { return []error{ErrUpstream, e.Err} }

// answerError is the UpstreamError of err, met reading the answer to the
// version message from addr.
func answerError(addr string, err error) *UpstreamError {
	e := &UpstreamError{Addr: addr, Problem: UpstreamNotANode, Err: err}
	var ne net.Error
	var me *magicError
	switch {
	case errors.As(err, &me):
		e.Problem, e.Got = UpstreamOtherNetwork, me.got
	case errors.As(err, &ne) && ne.Timeout():
		e.Problem = UpstreamSilent
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Problem = UpstreamHungUp
	}
	return e
}

// CheckUpstream connects to the node at addr, sends a version message and
// waits for the node's version, within timeout (10s if zero); a version
// of the nonce it sent is its own sent back (UpstreamEcho). A relay that
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
		return &UpstreamError{Addr: addr, Problem: UpstreamUnreachable, Err: err}
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	nonce := rand.Uint64()
	v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), nonce, 0)
	v.UserAgent = "/spvfilter-capture-check:0/"
	v.DisableRelayTx = true
	if err := wire.WriteMessage(c, v, wire.ProtocolVersion, netMagic); err != nil {
		return answerError(addr, fmt.Errorf("sending version: %w", err))
	}
	for i := 0; i < 16; i++ {
		// Reading through the relay's strict framing: the node must speak
		// the network's magic.
		cmd, payload, err := readUpstreamCommand(c, netMagic)
		if err != nil {
			return answerError(addr, err)
		}
		if cmd == wire.CmdVersion {
			var got wire.MsgVersion
			if err := got.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.LatestEncoding); err == nil && got.Nonce == nonce {
				return &UpstreamError{Addr: addr, Problem: UpstreamEcho}
			}
			return nil
		}
	}
	return &UpstreamError{Addr: addr, Problem: UpstreamNotANode}
}

// readUpstreamCommand reads one message from c through the relay's
// strict framing and returns its command and payload.
func readUpstreamCommand(c net.Conn, netMagic wire.BitcoinNet) (string, []byte, error) {
	var hdr [frameHeaderSize]byte
	var payload bytes.Buffer
	cmd, err := readFrame(c, netMagic, &hdr, &payload)
	return cmd, payload.Bytes(), err
}
