package neutrinobench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// rawConn is the least a client can be to take a node's filters: a
// handshake, then frames written with btcd's wire package and read by
// their headers, the filters' payloads counted and skipped, nothing
// checked. It bounds what the node can serve, the client costing next
// to nothing.
type rawConn struct {
	conn   net.Conn
	br     *bufio.Reader
	params *chaincfg.Params
}

// rawPver is the protocol version the raw connection speaks.
const rawPver = wire.ProtocolVersion

// servedHashes returns the block hashes addr serves, genesis first,
// read over a raw connection of its own, and fails t unless they cover
// c's blocks.
func servedHashes(ctx context.Context, t *testing.T, c *Chain, addr string, params *chaincfg.Params) []chainhash.Hash {
	t.Helper()
	rc, err := dialRaw(ctx, addr, params)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := rc.hashes()
	rc.conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes)-1 < c.Spec.Blocks {
		t.Fatalf("the node serves %d blocks, the chain has %d", len(hashes)-1, c.Spec.Blocks)
	}
	fmt.Printf("%d filters from %s\n", len(hashes)-1, addr)
	return hashes
}

// dialRaw connects to addr and completes the version handshake.
func dialRaw(ctx context.Context, addr string, params *chaincfg.Params) (*rawConn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{conn: c, br: bufio.NewReaderSize(c, 256<<10), params: params}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	me := wire.NewNetAddressIPPort(net.IPv4zero, 0, 0)
	v := wire.NewMsgVersion(me, me, rand.Uint64(), 0)
	v.Services = wire.SFNodeWitness
	v.DisableRelayTx = true
	if err := rc.write(v); err != nil {
		c.Close()
		return nil, err
	}
	for gotVersion, gotVerAck := false, false; !gotVersion || !gotVerAck; {
		cmd, _, err := rc.readFrame(true)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("handshake: %w", err)
		}
		switch cmd {
		case wire.CmdVersion:
			gotVersion = true
			if err := rc.write(wire.NewMsgVerAck()); err != nil {
				c.Close()
				return nil, err
			}
		case wire.CmdVerAck:
			gotVerAck = true
		}
	}
	c.SetDeadline(time.Time{})
	return rc, nil
}

func (rc *rawConn) write(msgs ...wire.Message) error {
	var b bytes.Buffer
	for _, m := range msgs {
		if _, err := wire.WriteMessageWithEncodingN(&b, m, rawPver, rc.params.Net, wire.WitnessEncoding); err != nil {
			return err
		}
	}
	_, err := rc.conn.Write(b.Bytes())
	return err
}

// readFrame reads the next message's frame and returns its command and,
// if keep, its payload; otherwise the payload is skipped.
func (rc *rawConn) readFrame(keep bool) (string, []byte, error) {
	var hdr [24]byte
	if _, err := io.ReadFull(rc.br, hdr[:]); err != nil {
		return "", nil, err
	}
	if wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[:4])) != rc.params.Net {
		return "", nil, errors.New("frame of another network")
	}
	cmd := string(bytes.TrimRight(hdr[4:16], "\x00"))
	n := int(binary.LittleEndian.Uint32(hdr[16:20]))
	if n > wire.MaxMessagePayload {
		return "", nil, fmt.Errorf("%s frame of %d bytes", cmd, n)
	}
	if !keep {
		_, err := rc.br.Discard(n)
		return cmd, nil, err
	}
	payload := make([]byte, n)
	_, err := io.ReadFull(rc.br, payload)
	return cmd, payload, err
}

// hashes syncs the node's headers from the genesis block and returns
// the hashes of blocks 0..tip.
func (rc *rawConn) hashes() ([]chainhash.Hash, error) {
	out := []chainhash.Hash{*rc.params.GenesisHash}
	for {
		gh := wire.NewMsgGetHeaders()
		gh.ProtocolVersion = rawPver
		last := out[len(out)-1]
		gh.AddBlockLocatorHash(&last)
		if err := rc.write(gh); err != nil {
			return nil, err
		}
		var hs wire.MsgHeaders
		for {
			cmd, payload, err := rc.readFrame(true)
			if err != nil {
				return nil, err
			}
			if cmd != wire.CmdHeaders {
				continue
			}
			if err := hs.BtcDecode(bytes.NewReader(payload), rawPver, wire.WitnessEncoding); err != nil {
				return nil, err
			}
			break
		}
		for _, h := range hs.Headers {
			if h.PrevBlock != out[len(out)-1] {
				return nil, fmt.Errorf("header %v does not follow %v", h.BlockHash(), out[len(out)-1])
			}
			out = append(out, h.BlockHash())
		}
		if len(hs.Headers) < wire.MaxBlockHeadersPerMsg {
			return out, nil
		}
	}
}

// rawRun is what a raw read of filters saw.
type rawRun struct {
	wall    time.Duration // from the first getcfilters written to the last pong read
	filters int
	// gaps is, summed over the pongs after which a request was written,
	// the time from the pong to the next filter: with one request in
	// flight, the node's turnaround, its lookup of the next filters
	// included, the client turning around at once.
	gaps time.Duration
}

// readFilters asks for the basic filters of blocks 1..len(hashes)-1 in
// requests of perRequest getcfilters messages of 1,000 each followed by a
// ping, inFlight requests at a time: the next request is written when the
// pong of the oldest in flight came. perRequest 2 and inFlight 1 is the
// request model of spvfilter's connection (peer.MaxCFiltersPerRequest,
// one request at a time); inFlight 2 keeps a second request queued at
// the node while it answers the first; perRequest 0 writes every
// getcfilters at once. It counts the filters read.
func (rc *rawConn) readFilters(hashes []chainhash.Hash, perRequest, inFlight int) (rawRun, error) {
	return rc.readRange(hashes, 1, len(hashes)-1, perRequest, inFlight)
}

// readRange is readFilters for the blocks from..to alone, hashes holding
// the hashes of blocks 0..to at least.
func (rc *rawConn) readRange(hashes []chainhash.Hash, from, to, perRequest, inFlight int) (rawRun, error) {
	var msgs []wire.Message
	for start := from; start <= to; start += wire.MaxGetCFiltersReqRange {
		stop := hashes[min(to, start+wire.MaxGetCFiltersReqRange-1)]
		msgs = append(msgs, wire.NewMsgGetCFilters(wire.GCSFilterRegular, uint32(start), &stop))
	}
	if perRequest <= 0 {
		perRequest = len(msgs)
	}
	var run rawRun
	begin := time.Now()
	next := 0 // the first message not written
	send := func() error {
		end := min(len(msgs), next+perRequest)
		err := rc.write(append(slices.Clone(msgs[next:end]), wire.NewMsgPing(rand.Uint64()))...)
		next = end
		return err
	}
	pending := 0 // requests in flight
	for ; pending < inFlight && next < len(msgs); pending++ {
		if err := send(); err != nil {
			return run, err
		}
	}
	var lastPong time.Time
	for pending > 0 {
		cmd, _, err := rc.readFrame(false)
		if err != nil {
			return run, err
		}
		switch cmd {
		case wire.CmdCFilter:
			if !lastPong.IsZero() {
				run.gaps += time.Since(lastPong)
				lastPong = time.Time{}
			}
			run.filters++
		case wire.CmdPong:
			// Its payload skipped: the raw connection sends no ping but
			// its requests', answered in order.
			pending--
			if next < len(msgs) {
				if err := send(); err != nil {
					return run, err
				}
				pending++
				lastPong = time.Now()
			}
		}
	}
	run.wall = time.Since(begin)
	if want := to - from + 1; run.filters != want {
		return run, fmt.Errorf("%d filters read, %d asked for", run.filters, want)
	}
	return run, nil
}
