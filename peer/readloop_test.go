package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// repeat returns n copies of m.
func repeat(n int, m wire.Message) []wire.Message {
	out := make([]wire.Message, n)
	for i := range out {
		out[i] = m
	}
	return out
}

// invOf returns an inv of n transaction hashes.
func invOf(n int) *wire.MsgInv {
	inv := wire.NewMsgInv()
	for i := 0; i < n; i++ {
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &chainhash.Hash{byte(i), byte(i >> 8)}))
	}
	return inv
}

// TestUnsolicitedBudgets plays streams of unsolicited messages to a
// connection with no request in flight: an honest node's traffic leaves
// it to end when the node closes it; each flood, and each oversized
// message, ends it at once with the reason.
func TestUnsolicitedBudgets(t *testing.T) {
	addrs := wire.NewMsgAddr()
	for i := 0; i < wire.MaxAddrPerMsg; i++ {
		addrs.AddAddress(wire.NewNetAddressIPPort(net.IPv4(1, 2, byte(i>>8), byte(i)), 8333, 0))
	}
	hdrs := hdrsOf()
	reject := wire.NewMsgReject(wire.CmdTx, wire.RejectInsufficientFee, "fee too low")
	tests := []struct {
		name   string
		stream []byte
		want   error
		says   string
	}{
		{"an honest node", frame(t, wire.NewMsgPing(1), invOf(1000), addrs, hdrs, reject, wire.NewMsgSendHeaders(), wire.NewMsgPing(2)),
			ErrDisconnected, "closed by the node"},
		{"pings", frame(t, repeat(21, wire.NewMsgPing(1))...), ErrFlooding, "21 unsolicited ping messages"},
		{"an inv of 5,001 entries", frame(t, invOf(5001)), ErrFlooding, "5001 unsolicited inv entries"},
		{"addresses", frame(t, addrs, addrs, addrs), ErrFlooding, "addr addresses"},
		{"headers", frame(t, repeat(101, hdrs)...), ErrFlooding, "101 unsolicited headers messages"},
		{"unrequested transactions", frame(t, repeat(101, chaincfg.RegressionNetParams.GenesisBlock.Transactions[0])...),
			ErrFlooding, "unrequested data messages"},
		{"unknown commands", bytes.Repeat(rawFrame("junk", []byte{1}), 101), ErrFlooding, `unknown-command messages in`},
		{"unknown commands of 1 MB", bytes.Repeat(rawFrame("junk", make([]byte, 1<<20)), 5), ErrFlooding, `last message: unknown-command "junk"`},
		{"a reject of 100 kB", frame(t, wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, strings.Repeat("x", 100<<10))),
			ErrProtocol, `"reject" message of 102`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got Announcement
			p := playToEnd(t, Config{OnAnnounce: func(a Announcement) {
				mu.Lock()
				got.Blocks = append(got.Blocks, a.Blocks...)
				got.Txs = append(got.Txs, a.Txs...)
				mu.Unlock()
			}}, tt.stream)
			err := p.Err()
			checkPeerError(t, err, p.Addr(), tt.want)
			if !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %q does not say %q", err, tt.says)
			}
			if tt.want == ErrDisconnected {
				time.Sleep(50 * time.Millisecond) // the callback's goroutine may still run
				mu.Lock()
				defer mu.Unlock()
				genesis := *chaincfg.RegressionNetParams.GenesisHash
				if len(got.Txs) != 1000 || len(got.Blocks) != 1 || got.Blocks[0] != genesis {
					t.Fatalf("announced %d transactions, blocks %v", len(got.Txs), got.Blocks)
				}
			}
		})
	}
}

// rawFrame encodes a message of any command on regtest.
func rawFrame(cmd string, payload []byte) []byte {
	var b bytes.Buffer
	hdr := make([]byte, wire.MessageHeaderSize)
	copy(hdr[4:16], cmd)
	wire.WriteMessageWithEncodingN(&b, wire.NewMsgPing(0), wire.ProtocolVersion, chaincfg.RegressionNetParams.Net, wire.BaseEncoding)
	copy(hdr[:4], b.Bytes()[:4])
	hdr[16], hdr[17], hdr[18], hdr[19] = byte(len(payload)), byte(len(payload)>>8), byte(len(payload)>>16), byte(len(payload)>>24)
	sum := chainhash.DoubleHashB(payload)
	copy(hdr[20:24], sum[:4])
	return append(hdr, payload...)
}

// TestPongsCoalesce: a node that pings while not reading gets at most one
// pending pong, for its latest ping, and no goroutine per ping.
func TestPongsCoalesce(t *testing.T) {
	p, node := nodePipe(t, Config{Timeout: 5 * time.Second})
	for i := uint64(1); i <= 15; i++ {
		if _, err := wire.WriteMessageWithEncodingN(node, wire.NewMsgPing(i), wire.ProtocolVersion, p.cfg.Params.Net, wire.BaseEncoding); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	var nonces []uint64
	for {
		node.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, m, _, err := wire.ReadMessageWithEncodingN(node, wire.ProtocolVersion, p.cfg.Params.Net, wire.BaseEncoding)
		if err != nil {
			break
		}
		if pong, ok := m.(*wire.MsgPong); ok {
			nonces = append(nonces, pong.Nonce)
		}
	}
	// The writer may have been writing the first pong when the others
	// came: that one and the latest.
	if len(nonces) == 0 || len(nonces) > 2 || nonces[len(nonces)-1] != 15 {
		t.Fatalf("pongs for %v, want at most two ending with 15", nonces)
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRequestGetsOnlyItsAnswer: while a request waits, other messages go
// to their handlers, not to the request.
func TestRequestGetsOnlyItsAnswer(t *testing.T) {
	genesis := chaincfg.RegressionNetParams.GenesisHash
	cp := wire.NewMsgCFCheckpt(wire.GCSFilterRegular, genesis, 1)
	cp.AddCFHeader(&chainhash.Hash{7})
	nf := wire.NewMsgNotFound()
	nf.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &chainhash.Hash{8}))
	var mu sync.Mutex
	var txs int
	stream := frame(t, invOf(10), nf, hdrsOf(), cp)
	p := pipePeer(t, Config{OnAnnounce: func(a Announcement) { mu.Lock(); txs += len(a.Txs); mu.Unlock() }}, stream, true)
	got, err := p.GetCFCheckpt(context.Background(), *genesis, 1)
	if err != nil || len(got) != 1 || got[0] != (chainhash.Hash{7}) {
		t.Fatalf("checkpoints %v, %v", got, err)
	}
	<-p.Done()
	// OnAnnounce runs from a goroutine of its own, once more after the
	// connection ends: wait for it.
	count := func() int { mu.Lock(); defer mu.Unlock(); return txs }
	for deadline := time.Now().Add(5 * time.Second); count() < 10 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := count(); n != 10 {
		t.Fatalf("%d transactions announced, want 10", n)
	}
}

// hdrsOf returns a headers message of the regtest genesis block.
func hdrsOf() *wire.MsgHeaders {
	hdrs := wire.NewMsgHeaders()
	hdrs.AddBlockHeader(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	return hdrs
}

func TestBucket(t *testing.T) {
	a := &allowance{"ping", "messages", 3, 2}
	var b bucket
	now := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if err := b.take(a, 1, now); err != nil {
			t.Fatalf("take %d of the burst: %v", i, err)
		}
	}
	err := b.take(a, 1, now)
	if !errors.Is(err, ErrFlooding) || !strings.Contains(err.Error(), "4 unsolicited ping messages in 0s (at once), over the budget of 3 at once and 2/s") {
		t.Fatalf("over the burst: %v", err)
	}
	// Half a second refills one.
	now = now.Add(500 * time.Millisecond)
	if err := b.take(a, 1, now); err != nil {
		t.Fatalf("after refilling: %v", err)
	}
	if err := b.take(a, 1, now); err == nil || !strings.Contains(err.Error(), "in 500ms (12/s)") {
		t.Fatalf("draining: %v", err)
	}
	// A long pause fills it, no more.
	now = now.Add(time.Hour)
	if err := b.take(a, 4, now); err == nil {
		t.Fatal("took more than the burst after a pause")
	}
	bytes := &byteAllowance
	if s := bytes.what(4.3e6); s != "4.3 MB of unsolicited messages" {
		t.Fatalf("bytes named %q", s)
	}
}

// TestFiltersTakenInReadLoop plays a getcfilters answer: the request
// gets each filter once and in order, an unwanted message among them stays unsolicited, a callback's
// error ends the request at once and drops the connection, and a filter
// for another block among them is caught and named by its height.
func TestFiltersTakenInReadLoop(t *testing.T) {
	const n = 24
	blocks := make([]chainhash.Hash, n)
	var stream []wire.Message
	for i := range blocks {
		blocks[i] = chainhash.Hash{byte(i), 1}
		stream = append(stream, wire.NewMsgCFilter(wire.GCSFilterRegular, &blocks[i], []byte{byte(i)}))
		if i == 2 {
			stream = append(stream, invOf(1))
		}
	}
	stop := errors.New("stop")
	tests := []struct {
		name    string
		failAt  int // the callback's error, or -1
		wrongAt int // a filter for another block, or -1
		wantErr error
	}{
		{"all", -1, -1, nil},
		{"error at the first", 0, -1, stop},
		{"error in the middle", n / 2, -1, stop},
		{"wrong block in the middle", -1, n / 2, ErrBadFilter},
		{"wrong block last", -1, n - 1, ErrBadFilter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			announced := 0
			msgs := slices.Clone(stream)
			if tt.wrongAt >= 0 {
				other := chainhash.Hash{byte(tt.wrongAt), 2}
				msgs[slices.IndexFunc(msgs, func(m wire.Message) bool {
					cf, ok := m.(*wire.MsgCFilter)
					return ok && cf.BlockHash == blocks[tt.wrongAt]
				})] = wire.NewMsgCFilter(wire.GCSFilterRegular, &other, []byte{byte(tt.wrongAt)})
			}
			p := pipePeer(t, Config{OnAnnounce: func(a Announcement) { mu.Lock(); announced += len(a.Txs); mu.Unlock() }},
				frame(t, msgs...), true)
			var got []int
			err := p.GetCFilters(context.Background(), 100, blocks, func(i int, data []byte) error {
				if len(data) != 1 || int(data[0]) != i {
					t.Errorf("filter %d is %x", i, data)
				}
				got = append(got, i)
				if i == tt.failAt {
					return stop
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			want := n
			switch {
			case tt.failAt >= 0:
				want = tt.failAt + 1
			case tt.wrongAt >= 0:
				want = tt.wrongAt
				if name := fmt.Sprintf("(height %d)", 100+tt.wrongAt); !strings.Contains(err.Error(), name) {
					t.Fatalf("error %q does not name %s", err, name)
				}
			}
			if len(got) != want || (want > 0 && got[len(got)-1] != want-1) {
				t.Fatalf("filters %v, want 0 to %d", got, want-1)
			}
			if err != nil {
				select {
				case <-p.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("connection still open after the callback's error")
				}
				return
			}
			p.Close()
			count := func() int { mu.Lock(); defer mu.Unlock(); return announced }
			for deadline := time.Now().Add(5 * time.Second); count() < 1 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if c := count(); c != 1 {
				t.Fatalf("%d transactions announced among the filters, want 1", c)
			}
		})
	}
}

// TestFilterCallbackBounds plays a getcfilters answer with an
// announcement after its sixth filter, and cancels the request while the
// callback holds that filter: the read loop reads nothing past the filter
// the callback holds (the announcement is not handled yet), and the
// callback, running on the read loop, never runs after GetCFilters
// returned.
func TestFilterCallbackBounds(t *testing.T) {
	const n, at = 24, 5
	blocks := make([]chainhash.Hash, n)
	var stream []wire.Message
	for i := range blocks {
		blocks[i] = chainhash.Hash{byte(i), 1}
		stream = append(stream, wire.NewMsgCFilter(wire.GCSFilterRegular, &blocks[i], []byte{byte(i)}))
		if i == at {
			stream = append(stream, invOf(1))
		}
	}
	var announced, returned atomic.Bool
	p := pipePeer(t, Config{OnAnnounce: func(Announcement) { announced.Store(true) }}, frame(t, stream...), true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int
	err := p.GetCFilters(ctx, 0, blocks, func(i int, data []byte) error {
		if returned.Load() {
			t.Errorf("callback for filter %d after GetCFilters returned", i)
		}
		got = append(got, i)
		if i == at {
			cancel()
			time.Sleep(100 * time.Millisecond) // GetCFilters sees the context's end meanwhile
			if announced.Load() {
				t.Errorf("the announcement after filter %d was read while the callback held it", i)
			}
		}
		return nil
	})
	returned.Store(true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
	time.Sleep(50 * time.Millisecond) // a callback after the return would show
	if len(got) != at+1 || got[at] != at {
		t.Fatalf("filters %v, want 0 to %d", got, at)
	}
}
