package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// fixture is a short regtest chain shared by the tests of this package,
// with one payment to alice at height 102 and segwit active.
type fixture struct {
	node  *peertest.Node
	alice *peertest.Key
	pay   *wire.MsgTx
	tip   int32
}

var (
	fx     *fixture
	shared = peertest.NewShared(newFixture, peertest.WithArgs("--nobanning"))
)

// needFixture starts the shared node on first use, so that fuzzing and
// examples run without it.
func needFixture(t *testing.T) { fx = shared.Get(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Stop(code)
	if pairLn != nil {
		pairLn.Close() // removes the socket file
	}
	os.Exit(code)
}

func newFixture(node *peertest.Node) (*fixture, error) {
	f := &fixture{node: node, alice: peertest.NewKey("alice")}
	if _, err := node.GenerateErr(101); err != nil {
		return f, err
	}
	var err error
	if f.pay, err = node.SpendCoinbaseErr(wire.NewTxOut(50_000_000, f.alice.PkScript())); err != nil {
		return f, err
	}
	if _, err := node.ConfirmErr(f.pay); err != nil {
		return f, err
	}
	// btcd's regtest activates segwit at height 432 (BIP 9, windows of
	// 144 blocks); witness spends need it.
	if _, err := node.GenerateErr(segwitHeight - 102); err != nil {
		return f, err
	}
	count, err := node.RPC().GetBlockCount()
	f.tip = int32(count)
	return f, err
}

// segwitHeight is the fixture's tip at the start.
const segwitHeight = 432

// confirm mines a block holding txs and moves the fixture's tip.
func (f *fixture) confirm(t *testing.T, txs ...*wire.MsgTx) {
	t.Helper()
	f.node.Confirm(t, txs...)
	f.tip++
}

func dial(t *testing.T, addr string, timeout time.Duration) *Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Dial(ctx, Config{Addr: addr, Params: fx.node.Params, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func syncHeaders(t *testing.T, p *Peer) *chain.Chain {
	t.Helper()
	c := chain.New(fx.node.Params)
	if _, err := p.SyncHeaders(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkPeerError checks that err is a *PeerError from addr wrapping want.
func checkPeerError(t *testing.T, err error, addr string, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Peer != addr || pe.Op == "" {
		t.Fatalf("error %#v is not a *PeerError naming %s and the operation", err, addr)
	}
	if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("message %q does not name the peer on one line", err)
	}
}

func TestSyncHeaders(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	if p.Services()&wire.SFNodeBloom == 0 || p.Services()&wire.SFNodeCF == 0 {
		t.Fatalf("services %v: want bloom and cf", p.Services())
	}
	if !strings.Contains(p.UserAgent(), "btcd") || p.ProtocolVersion() < minProtocolVersion {
		t.Fatalf("user agent %q, protocol %d", p.UserAgent(), p.ProtocolVersion())
	}
	c := chain.New(fx.node.Params)
	res, err := p.SyncHeaders(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if up := res.Update; c.Height() != fx.tip || res.Tip != fx.tip || up.Connected != int(fx.tip) || up.Reorganized() || res.Branch != nil {
		t.Fatalf("chain height %d, result %+v; node has %d", c.Height(), res, fx.tip)
	}
	for _, h := range []int32{0, 1, 102, fx.tip} {
		want, err := fx.node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Hash(h); got != *want {
			t.Errorf("height %d: hash %v, node says %v", h, got, want)
		}
	}
	// Nothing new: a second sync changes nothing.
	if res, err := p.SyncHeaders(context.Background(), c); err != nil || res.Update.Connected != 0 || res.Tip != fx.tip {
		t.Fatalf("second sync: %v, %+v", err, res)
	}
}

func TestGetBlocks(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	c := syncHeaders(t, p)
	var hashes []chainhash.Hash
	for h := int32(100); h < 100+MaxBlocksPerRequest; h++ {
		hashes = append(hashes, c.Hash(h))
	}
	var got []int
	err := p.GetBlocks(context.Background(), hashes, func(i int, b *wire.MsgBlock) error {
		got = append(got, i)
		want, err := fx.node.RPC().GetBlock(&hashes[i])
		if err != nil {
			return err
		}
		if len(b.Transactions) != len(want.Transactions) {
			return fmt.Errorf("block %d: %d transactions, node has %d", i, len(b.Transactions), len(want.Transactions))
		}
		return nil
	})
	if err != nil || len(got) != len(hashes) {
		t.Fatalf("blocks delivered %v: %v", got, err)
	}
	stop := errors.New("stop")
	if err := p.GetBlocks(context.Background(), hashes[:3], func(int, *wire.MsgBlock) error { return stop }); err != stop {
		t.Fatalf("error from the callback: got %v", err)
	}
	// The blocks left of the stopped request do not reach the next one.
	if err := p.GetBlocks(context.Background(), hashes[5:6], func(i int, b *wire.MsgBlock) error {
		if b.BlockHash() != hashes[5] {
			return fmt.Errorf("got block %v", b.BlockHash())
		}
		return nil
	}); err != nil {
		t.Fatalf("request after a stopped one: %v", err)
	}
	// A block the node does not have.
	if err := p.GetBlocks(context.Background(), []chainhash.Hash{{1}}, func(int, *wire.MsgBlock) error { return nil }); !errors.Is(err, ErrMissingBlocks) {
		t.Fatalf("unknown block: %v, want ErrMissingBlocks", err)
	}
	if err := p.GetBlocks(context.Background(), make([]chainhash.Hash, MaxBlocksPerRequest+1), nil); err == nil {
		t.Fatal("an oversized request was sent")
	}
}

// TestMissingBlockIsNotABadBlock: a node that leaves a block out of its
// answer has withheld it, not sent a bad one.
func TestMissingBlockIsNotABadBlock(t *testing.T) {
	needFixture(t)
	c := syncHeaders(t, dial(t, fx.node.P2PAddr, 0))
	skip := c.Hash(101)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if b, ok := m.(*wire.MsgBlock); ok && b.BlockHash() == skip {
			return nil, false
		}
		return []wire.Message{m}, false
	})
	p := dial(t, l.Addr, 0)
	err := p.GetBlocks(context.Background(), []chainhash.Hash{c.Hash(100), skip, c.Hash(102)}, func(int, *wire.MsgBlock) error { return nil })
	checkPeerError(t, err, l.Addr, ErrMissingBlocks)
}

func TestFilterMessages(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	c := syncHeaders(t, p)
	ctx := context.Background()
	if err := p.AddToFilter(ctx, make([]byte, bip37.MaxFilterAddDataSize+1)); !errors.Is(err, bip37.ErrFilterAddTooLarge) {
		t.Fatalf("oversized filteradd: %v", err)
	}
	f := bip37.NewFilter(10, 0.001, 0, wire.BloomUpdateAll)
	f.Add(fx.alice.PkScript()[3:23])
	if err := p.LoadFilter(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := p.AddToFilter(ctx, []byte("element")); err != nil {
		t.Fatal(err)
	}
	blocks, err := p.GetFilteredBlocks(ctx, []chainhash.Hash{c.Hash(101), c.Hash(102)})
	if err != nil || len(blocks) != 2 || len(blocks[1].Txs) != 1 || blocks[1].Txs[0].TxHash() != fx.pay.TxHash() || blocks[1].Total != 2 {
		t.Fatalf("filtered blocks with a loaded filter: %+v, %v", blocks, err)
	}
	if err := p.ClearFilter(ctx); err != nil {
		t.Fatal(err)
	}
	// Without a filter btcd answers filtered-block requests with
	// nothing: only the pong comes.
	if _, err = p.GetFilteredBlocks(ctx, []chainhash.Hash{c.Hash(102)}); !errors.Is(err, ErrMissingBlocks) {
		t.Fatalf("filtered block without a filter: %v, want ErrMissingBlocks", err)
	}
}

// TestFilteredBlockIndexes: a filtered block gives the position of each
// matched transaction in its block, as its merkle block proves it.
func TestFilteredBlockIndexes(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	c := syncHeaders(t, p)
	ctx := context.Background()
	f := bip37.NewFilter(10, 0.001, 0, wire.BloomUpdateNone)
	f.Add(fx.alice.PkScript()[3:23])
	if err := p.LoadFilter(ctx, f); err != nil {
		t.Fatal(err)
	}
	blocks, err := p.GetFilteredBlocks(ctx, []chainhash.Hash{c.Hash(101), c.Hash(102)})
	if err != nil || len(blocks) != 2 || len(blocks[0].Indexes) != 0 || len(blocks[1].Txs) != 1 ||
		blocks[1].Txs[0].TxHash() != fx.pay.TxHash() || !slices.Equal(blocks[1].Indexes, []uint32{1}) {
		t.Fatalf("filtered blocks %+v, %v: want the payment at position 1 of block 102", blocks, err)
	}
}

func TestConfigLog(t *testing.T) {
	needFixture(t)
	var log strings.Builder
	p, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: fx.node.Params, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"connected to " + fx.node.P2PAddr, "send getheaders", "headers: tip"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
}

func TestDialWrongNetwork(t *testing.T) {
	needFixture(t)
	_, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: &chaincfg.MainNetParams, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), fx.node.P2PAddr) {
		t.Fatalf("dialing a regtest node as mainnet: %v", err)
	}
	if _, err := Dial(context.Background(), Config{Addr: "no-port", Params: &chaincfg.MainNetParams}); err == nil {
		t.Fatal("an address without a port was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, Config{Addr: fx.node.P2PAddr, Params: fx.node.Params}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with a cancelled context: %v", err)
	}
}

// silentListener accepts connections on 127.0.0.1, counts them and never
// answers.
func silentListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String(), &n
}

// TestTimeoutDecides: the configured timeout, and nothing else, ends a
// wait, at values above btcd's own 30-second stall limit too; the error
// says the node stalled. The long case runs with SPVFILTER_LONG=1.
func TestTimeoutDecides(t *testing.T) {
	timeouts := []time.Duration{time.Second, 3 * time.Second}
	if os.Getenv("SPVFILTER_LONG") == "1" {
		timeouts = append(timeouts, 60*time.Second)
	}
	for _, timeout := range timeouts {
		t.Run(timeout.String(), func(t *testing.T) {
			t.Parallel()
			addr, _ := silentListener(t)
			start := time.Now()
			_, err := Dial(context.Background(), Config{Addr: addr, Params: &chaincfg.RegressionNetParams, Timeout: timeout})
			elapsed := time.Since(start)
			checkPeerError(t, err, addr, ErrStalled)
			if elapsed < timeout || elapsed > timeout+2*time.Second {
				t.Fatalf("gave up after %v with a timeout of %v", elapsed, timeout)
			}
			if strings.Contains(err.Error(), "closed by the node") {
				t.Fatalf("error blames the node for closing: %v", err)
			}
		})
	}
}

// TestTricklingAnswerIsCaught: a node that sends each filter just within
// the timeout cannot keep a request alive; the whole answer is due within
// the timeout.
func TestTricklingAnswerIsCaught(t *testing.T) {
	needFixture(t)
	c := syncHeaders(t, dial(t, fx.node.P2PAddr, 0))
	const timeout = time.Second
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok {
			time.Sleep(timeout / 4)
		}
		return []wire.Message{m}, false
	})
	p := dial(t, l.Addr, timeout)
	var blocks []chainhash.Hash
	for h := int32(0); h < 20; h++ {
		blocks = append(blocks, c.Hash(h))
	}
	n := 0
	start := time.Now()
	err := p.GetCFilters(context.Background(), 0, blocks, func(int, []byte) error { n++; return nil })
	elapsed := time.Since(start)
	checkPeerError(t, err, l.Addr, ErrStalled)
	if n < 2 || n >= len(blocks) || elapsed > 2*timeout {
		t.Fatalf("%d filters in %v before the error", n, elapsed)
	}
}

// TestHeaderLies has a proxy tamper with or withhold headers.
func TestHeaderLies(t *testing.T) {
	needFixture(t)
	tests := []struct {
		name    string
		timeout time.Duration
		lie     peertest.LieFunc
		want    error
	}{
		{"headers that do not link", 0, func(m wire.Message) ([]wire.Message, bool) {
			if h, ok := m.(*wire.MsgHeaders); ok && len(h.Headers) > 10 {
				h.Headers[10].PrevBlock[0] ^= 1
			}
			return []wire.Message{m}, false
		}, ErrBadHeaders},
		{"headers with changed difficulty", 0, func(m wire.Message) ([]wire.Message, bool) {
			if h, ok := m.(*wire.MsgHeaders); ok && len(h.Headers) > 10 {
				h.Headers[10].Bits = 0x1d00ffff
			}
			return []wire.Message{m}, false
		}, ErrBadHeaders},
		{"headers stall", 500 * time.Millisecond, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgHeaders); ok {
				return nil, false
			}
			return []wire.Message{m}, false
		}, ErrStalled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, tt.lie)
			p := dial(t, l.Addr, tt.timeout)
			_, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params))
			checkPeerError(t, err, l.Addr, tt.want)
			// The connection is dropped after a lie.
			if _, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params)); !errors.Is(err, ErrDisconnected) {
				t.Errorf("after the lie: %v, want ErrDisconnected", err)
			}
		})
	}
}

// TestUnrequestedMessagesDoNotHoldAWait has a liar withhold the headers
// and send unrequested transactions faster than the timeout: the wait must
// still end after the timeout.
func TestUnrequestedMessagesDoNotHoldAWait(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			return nil, false
		}
		return []wire.Message{m}, false
	})
	const timeout = 500 * time.Millisecond
	p := dial(t, l.Addr, timeout)
	stop := make(chan struct{})
	spam := make(chan error, 1)
	go func() {
		// Ten timeouts of spam at most, so that a client whose wait
		// the spam holds open fails the test instead of hanging it.
		tick := time.NewTicker(timeout / 5)
		defer tick.Stop()
		end := time.After(10 * timeout)
		for {
			select {
			case <-stop:
				spam <- nil
				return
			case <-end:
				spam <- nil
				return
			case <-tick.C:
				if err := l.Inject(fx.pay); err != nil {
					spam <- err
					return
				}
			}
		}
	}()
	start := time.Now()
	_, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params))
	elapsed := time.Since(start)
	close(stop)
	if err := <-spam; err != nil {
		t.Logf("injecting: %v", err)
	}
	checkPeerError(t, err, l.Addr, ErrStalled)
	if elapsed > 4*timeout {
		t.Fatalf("stalled after %v with a timeout of %v", elapsed, timeout)
	}
}

// TestBroadcast: a transaction announced to the node is requested, served
// and accepted into its mempool; announcing it again is harmless; one the
// node rejects is reported as such.
func TestBroadcast(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 5*time.Second)
	tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.PkScript()))
	ctx := context.Background()
	if has, err := p.HasTx(ctx, tx.TxHash()); err != nil || has {
		t.Fatalf("before the broadcast: has %v, %v", has, err)
	}
	if err := p.Broadcast(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if !fx.node.InMempool(t, tx.TxHash()) {
		t.Fatalf("the mempool lacks %v", tx.TxHash())
	}
	// Again, on a new connection: the node has it and does not ask.
	p2 := dial(t, fx.node.P2PAddr, 2*time.Second)
	if err := p2.Broadcast(ctx, tx); err != nil {
		t.Fatalf("second broadcast: %v", err)
	}
	fx.confirm(t, tx)
	// A double spend of the same coinbase: requested, never accepted.
	bad := tx.Copy()
	bad.TxOut[0].Value--
	err := p2.Broadcast(ctx, bad)
	checkPeerError(t, err, fx.node.P2PAddr, ErrRejected)
}

// TestBytesCounted: what the peer counts as sent and received is what the
// node counts as received and sent on the same connection (btcd's
// getpeerinfo), once both are idle.
func TestBytesCounted(t *testing.T) {
	needFixture(t)
	p := dial(t, fx.node.P2PAddr, 0)
	syncHeaders(t, p)
	local := p.conn.LocalAddr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := fx.node.RPC().GetPeerInfo()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(infos, func(pi btcjson.GetPeerInfoResult) bool { return pi.Addr == local })
		if i < 0 {
			t.Fatalf("the node lists no peer at %s", local)
		}
		sent, received := p.BytesSent(), p.BytesReceived()
		if infos[i].BytesRecv == sent && infos[i].BytesSent == received && sent > 0 {
			t.Logf("%d bytes sent, %d received, as the node counts them", sent, received)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sent %d, received %d; the node received %d, sent %d", sent, received, infos[i].BytesRecv, infos[i].BytesSent)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
