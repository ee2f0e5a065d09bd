package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// waitOpen waits up to 3 s for proxy to hold want connections, and
// returns how many it holds: the client closed them before the send
// returned, and the proxy counts a connection closed once its own
// goroutines saw it end, which a loaded machine may delay.
func waitOpen(proxy *peertest.WatchProxy, want int) int {
	for end := time.Now().Add(3 * time.Second); proxy.Open() != want && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	return proxy.Open()
}

// ownConn is the connection a client holds to its one peer, taken
// before a send so that afterwards the test can tell whether the send
// kept it. The count of connections open at a proxy in front of the
// peer is not enough: the proxy counts a connection closed only once its
// own goroutines saw it end, so right after a send that dropped the
// client's connection it may still count it open.
type ownConn struct {
	c *Client
	m *pool.Member
	p *peer.Peer
}

// takeOwnConn returns c's connection to its one serving peer; it fails
// t unless c has exactly one.
func takeOwnConn(t *testing.T, c *Client) ownConn {
	t.Helper()
	ms := c.pool.Serving(0)
	if len(ms) != 1 {
		t.Fatalf("%d peers serving: want 1", len(ms))
	}
	return ownConn{c: c, m: ms[0], p: c.pool.Conn(ms[0])}
}

// lost returns nil if the connection taken is still the peer's and
// open, else why not: a drop closes it before the request that dropped
// it returns.
func (o ownConn) lost() error {
	if now := o.c.pool.Conn(o.m); now != o.p {
		return fmt.Errorf("the peer's connection was replaced (now %p, was %p; the one taken ended: %v)", now, o.p, o.p.Err())
	}
	return o.p.Err()
}

// TestSendWatchStalls: a peer that accepts the announcement connection
// and never answers its version message, or ends the handshake and never
// answers the ping that opens the watch, delays the send by no more than
// watchOpenWait (before, by the whole timeout: 5.0 s of a 5 s timeout,
// since every watch had to open before the transaction was given), the
// node's mempool still tells it took the transaction, and the stalled
// connection is closed when the send ends: the proxy holds one
// connection afterwards, and it is the client's own, the one it held
// before the send, still open (see ownConn: the proxy's count alone
// could still hold a connection the client dropped).
func TestSendWatchStalls(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	const timeout = 5 * time.Second
	for _, kind := range []struct {
		name string
		kind peertest.WatchKind
	}{{"handshake", peertest.WatchStalls}, {"ping", peertest.WatchNoPong}} {
		t.Run(kind.name, func(t *testing.T) {
			proxy := peertest.NewWatchProxy(t, node.P2PAddr, node.Params.Net, kind.kind, nil)
			c := connectTo(t, node, timeout, proxy.Addr)
			own := takeOwnConn(t, c)
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
			start := time.Now()
			res, err := c.SendTransaction(context.Background(), tx)
			elapsed := time.Since(start)
			t.Logf("%v after %v; result %+v", err, elapsed.Round(time.Millisecond), res)
			if err != nil || !slices.Equal(res.Accepted, []string{proxy.Addr}) || !node.InMempool(t, tx.TxHash()) {
				t.Fatalf("error %v, result %+v: want the transaction taken", err, res)
			}
			if proxy.Watches() != 1 {
				t.Fatalf("%d announcement connections: want 1", proxy.Watches())
			}
			if elapsed > watchOpenWait+time.Second {
				t.Errorf("the send took %v: a stalled announcement connection delayed it beyond %v", elapsed, watchOpenWait)
			}
			if err := own.lost(); err != nil {
				t.Errorf("the client's own connection was not kept: %v", err)
			}
			if n := waitOpen(proxy, 1); n != 1 {
				t.Errorf("%d connections open at the peer after the send: want 1 (the client's own)", n)
			}
		})
	}
}

// orphanTx returns a transaction spending an output nobody knows: btcd
// keeps it as an orphan, without a reject message.
func orphanTx() *wire.MsgTx {
	var prev chainhash.Hash
	rand.Read(prev[:])
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&prev, 0), nil, [][]byte{{1}}))
	tx.AddTxOut(wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
	return tx
}

// TestSendClosesWatches: the announcement connections are closed when
// the send ends, whether the transaction was taken, refused by every
// peer, or the context cancelled while the send waits (a Core-like node
// that drops an orphan without a word), even while the node is asked
// whether it holds the transaction (its answer is waited for, within the
// timeout, rather than its connection dropped): the connection the
// client held before the send is still its own and open when the send
// returns (see ownConn), and the proxy in front of the peer holds it
// alone afterwards. So too when the send is cancelled as that
// question's getdata is being written (before, the cancel dropped the
// connection, the write under way abandoned: 9 of
// 10 runs failed, and a loaded machine failed so now and then in the
// case cancelled while asked), or while the node's answer to whether it
// held the transaction before it was announced is on its way (before,
// the announcement, written after the cancel, dropped the connection:
// 40 of 40 runs failed). A failure shows the client's log, with when the
// send was cancelled and returned.
func TestSendClosesWatches(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	const timeout = 5 * time.Second
	tests := []struct {
		name   string
		core   bool // the peer behind the proxy is Core-like
		tx     func() *wire.MsgTx
		cancel time.Duration // cancel the send after this long (0: never)
		taken  bool
		at     cancelPoint // cancel the send there instead (see cancelPoint)
	}{
		{"taken", false, func() *wire.MsgTx {
			return node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		}, 0, true, 0},
		{"refused", false, orphanTx, 0, false, 0},
		{"cancelled", true, orphanTx, time.Second, false, 0},
		{"cancelled while asked", true, orphanTx, 0, false, cancelAskAnswered},
		{"cancelled before the announcement", true, orphanTx, 0, false, cancelFirstAnswered},
		{"cancelled as asked", true, orphanTx, 0, false, cancelAskWritten},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := node.P2PAddr
			if tt.core {
				target = peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net).Addr
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clog := &stampedWriter{w: &lockedWriter{w: &strings.Builder{}}, start: time.Now()}
			var dialer peer.DialFunc
			switch tt.at {
			case cancelAskAnswered, cancelFirstAnswered:
				target = peertest.NewLiar(t, target, node.Params.Net, (&cancelWhileAsked{cancel: cancel, log: clog, nth: tt.at.nth()}).lie,
					peertest.AlsoSees(wire.CmdGetData, wire.CmdNotFound)).Addr
			case cancelAskWritten:
				dialer = (&cancelAsWritten{cancel: cancel, log: clog}).dial
			}
			proxy := peertest.NewWatchProxy(t, target, node.Params.Net, peertest.WatchPasses, nil)
			c := connectWith(t, Config{Peers: []string{proxy.Addr}, Params: node.Params, Timeout: timeout, Log: clog, Dialer: dialer})
			own := takeOwnConn(t, c)
			t.Cleanup(func() {
				if t.Failed() {
					for _, st := range c.Peers() {
						t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
					}
					t.Logf("the proxy: %d connections open, %d announcement connections; the client's log:\n%s", proxy.Open(), proxy.Watches(), clog)
				}
			})
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, func() {
					fmt.Fprintf(clog, "test: the send cancelled\n")
					cancel()
				})
			}
			start := time.Now()
			res, err := c.SendTransaction(ctx, tx(tt.tx))
			fmt.Fprintf(clog, "test: the send returned\n")
			t.Logf("%v after %v; result %+v", err, time.Since(start).Round(time.Millisecond), res)
			if (err == nil) != tt.taken || tt.cancel > 0 && !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v: want taken %t", err, tt.taken)
			}
			if err := own.lost(); err != nil {
				t.Errorf("the client's own connection was not kept: %v", err)
			}
			if proxy.Watches() != 1 {
				t.Fatalf("%d announcement connections: want 1", proxy.Watches())
			}
			switch n := waitOpen(proxy, 1); {
			case n == 0:
				t.Errorf("no connection open at the peer after the send: the client's own was closed too (want it kept; the client's log shows the requests around the send's end)")
			case n != 1:
				t.Errorf("%d connections open at the peer after the send: want 1 (the client's own)", n)
			}
		})
	}
}

// cancelWhileAsked is a proxy's lie that cancels a send when the
// node's nth notfound comes, or, with nth 0, once the node asked for the
// transaction (getdata), when its next notfound comes (its answer to
// whether it holds the transaction, asked after it was given): the
// notfound is held a moment after the cancel, so that the send ends
// while its question is out.
type cancelWhileAsked struct {
	cancel    context.CancelFunc
	log       io.Writer
	nth       int32
	asked     atomic.Bool
	notFounds atomic.Int32
	done      atomic.Bool
}

// cancelPoint is where TestSendClosesWatches cancels a send, at a moment
// a loaded machine may cancel it, while a request is under way on the
// peer's own connection (0: nowhere).
type cancelPoint int

const (
	// cancelAskAnswered: once the node asked for the transaction, when
	// its answer to the next getdata (whether it holds it) is on its
	// way, held a moment (cancelWhileAsked).
	cancelAskAnswered cancelPoint = iota + 1
	// cancelFirstAnswered: when the node's answer to whether it held the
	// transaction before it was announced (its second notfound: the
	// first answers the send's first question) is on its way, held a
	// moment: the announcement comes after the cancel.
	cancelFirstAnswered
	// cancelAskWritten: as the getdata asking whether the node holds the
	// transaction, after it was given it, is being written: the write
	// ends after the cancel (cancelAsWritten).
	cancelAskWritten
)

// nth is the notfound cancelWhileAsked cancels on at p (see
// cancelWhileAsked.nth).
func (p cancelPoint) nth() int32 {
	if p == cancelFirstAnswered {
		return 2
	}
	return 0
}

// cancelAsWritten dials connections on which the first getdata written
// after an inv cancels a send, and is written a moment after: the ask
// whether the node holds the transaction, which follows the node's
// getdata for it (the transaction is served before or after it).
type cancelAsWritten struct {
	cancel context.CancelFunc
	log    io.Writer
	done   atomic.Bool
}

func (c *cancelAsWritten) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cancellingConn{Conn: conn, c: c}, nil
}

// cancellingConn is a connection of cancelAsWritten's.
type cancellingConn struct {
	net.Conn
	c         *cancelAsWritten
	announced bool // an inv was written
}

// Write looks at the command of each message header written (a
// message's header is written on its own, then its payload).
func (w *cancellingConn) Write(b []byte) (int, error) {
	if len(b) == wire.MessageHeaderSize {
		switch cmd := strings.TrimRight(string(b[4:16]), "\x00"); {
		case cmd == wire.CmdInv:
			w.announced = true
		case cmd == wire.CmdGetData && w.announced && w.c.done.CompareAndSwap(false, true):
			fmt.Fprintf(w.c.log, "test: the send cancelled while its getdata is written\n")
			w.c.cancel()
			time.Sleep(100 * time.Millisecond)
		}
	}
	return w.Conn.Write(b)
}

func (c *cancelWhileAsked) lie(m wire.Message) ([]wire.Message, bool) {
	switch m.(type) {
	case *wire.MsgGetData:
		c.asked.Store(true)
	case *wire.MsgNotFound:
		n := c.notFounds.Add(1)
		due := c.nth == 0 && c.asked.Load() || c.nth > 0 && n == c.nth
		if due && c.done.CompareAndSwap(false, true) {
			fmt.Fprintf(c.log, "test: the send cancelled, the node's notfound %d held\n", n)
			c.cancel()
			time.Sleep(200 * time.Millisecond)
		}
	}
	return []wire.Message{m}, false
}

// tx returns build's transaction.
func tx(build func() *wire.MsgTx) *wire.MsgTx { return build() }

// TestSendFalseAnnouncementBeside: an honest node and a Core-like one
// in front of the same node that announces the transactions it is given
// falsely (it keeps them from the node). The send is repeated with new
// transactions, by a client of its own each time, until the liar is
// given one first; then it must still succeed through the honest node,
// name the false announcement as the liar's failure, and lose no
// timeout to the liar (before, 3.0 s, the timeout, and the liar's
// failure said it stalled: the send waited for its mempool to show a
// transaction it never had; then 1.0 s, the wait for the liar to ask for
// the transaction; now the false announcement ends that wait too). A liar
// that served another transaction for the txid asked is banned, with
// that proof, whether it was given the transaction first or second (given
// second, it lies the same way, and the client may ask it for the
// transaction it announced); one that answered notfound never is (an
// honest node may have dropped the transaction meanwhile).
func TestSendFalseAnnouncementBeside(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 100+maxOrderTries)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	const timeout = 3 * time.Second
	tests := []struct {
		name   string
		serve  *wire.MsgTx
		banned bool
	}{
		{"notfound", nil, false},
		{"another transaction", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			liar := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeAnnouncesFalsely(tt.serve))
			for try := 1; ; try++ {
				if try > maxOrderTries {
					t.Fatalf("the liar was never given the transaction first in %d sends", maxOrderTries)
				}
				c := connectTo(t, node, timeout, node.P2PAddr, liar.Addr)
				tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
				start := time.Now()
				res, err := c.SendTransaction(context.Background(), tx)
				elapsed := time.Since(start)
				t.Logf("try %d: %v after %v; result %+v", try, err, elapsed.Round(time.Millisecond), res)
				if err != nil || !slices.Contains(res.Accepted, node.P2PAddr) || !node.InMempool(t, tx.TxHash()) {
					t.Fatalf("error %v, result %+v: want taken by the honest node", err, res)
				}
				checkLiarBan(t, c, liar.Addr, tt.banned)
				if res.Given[0] != liar.Addr {
					continue
				}
				if slices.Contains(res.Accepted, liar.Addr) || !errors.Is(res.Failed[liar.Addr], peer.ErrFalseAnnouncement) ||
					!strings.Contains(res.Failed[liar.Addr].Error(), liar.Addr) ||
					slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, peer.ErrFalseAnnouncement.Error()) }) {
					t.Errorf("result %+v: want the false announcement of %s named once, in Failed, not counted", res, liar.Addr)
				}
				if elapsed > 500*time.Millisecond {
					t.Errorf("the send took %v: the liar's turn cost the wait for it to ask, or the timeout", elapsed)
				}
				if _, banned := c.pool.IsBanned(liar.Addr); banned != tt.banned {
					t.Errorf("liar banned: %t, want %t (bans %+v)", banned, tt.banned, c.Bans())
				}
				return
			}
		})
	}
}

// checkLiarBan fails t if c banned liar where it may not (may is false:
// no proof was possible), or banned it without proof of a false
// announcement.
func checkLiarBan(t *testing.T, c *Client, liar string, may bool) {
	t.Helper()
	for _, b := range c.Bans() {
		if b.Host != liar {
			t.Fatalf("ban %+v: only the liar may be banned", b)
		}
		if !may || !b.Proof || !strings.Contains(b.Reason, peer.ErrFalseAnnouncement.Error()) {
			t.Fatalf("ban %+v: want none, or one proving a false announcement where another transaction was served", b)
		}
	}
}

// TestSendWatchLies: a Core-like node whose announcement connection
// lies while the client's own connection is honest. A transaction of
// 3.9 MB served for the txid announced is a false announcement, proved:
// the send fails naming it and what was served, and the peer is banned.
// A flood of invs of other txids ends the watch (ErrFlooding): the send
// fails after the timeout (the node's acceptance cannot be learnt any
// more) naming the flood, and the peer is banned, as for a flood on its
// own connection (before, the failure named only the stall of the
// client's own connection, and the flood went unnamed), whether the
// flood comes once the watch opened or while it waits for the answer
// that opens it (before, a watch that failed to open was only logged:
// the flood went unnamed and unbanned, as in one run of a loaded
// machine where the flood beat the answer to the watch's ping).
func TestSendWatchLies(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	const timeout = 2 * time.Second
	huge := wire.NewMsgTx(2)
	huge.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 7}, nil, nil))
	huge.AddTxOut(wire.NewTxOut(1, make([]byte, 3_900_000)))
	tests := []struct {
		name  string
		kind  peertest.WatchKind
		serve *wire.MsgTx
		want  error
		words string
	}{
		{"serves another transaction", peertest.WatchServes, huge, peer.ErrFalseAnnouncement, huge.TxHash().String()},
		{"floods", peertest.WatchFloods, nil, peer.ErrFlooding, "announcement connection"},
		{"floods before it opens", peertest.WatchFloodsUnopened, nil, peer.ErrFlooding, "announcement connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
			proxy := peertest.NewWatchProxy(t, core.Addr, node.Params.Net, tt.kind, tt.serve)
			c := connectTo(t, node, timeout, proxy.Addr)
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
			start := time.Now()
			res, err := c.SendTransaction(context.Background(), tx)
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			if err == nil || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.words) || len(res.Accepted) != 0 {
				t.Fatalf("error %v, result %+v: want the send failed, naming %v", err, res, tt.want)
			}
			if _, banned := c.pool.IsBanned(proxy.Addr); !banned {
				t.Errorf("not banned (bans %+v)", c.Bans())
			}
		})
	}
}

// TestSendWatchSlowVerack: a Core-like node that reads the end of the
// announcement connection's handshake (its verack) 300 ms late, after
// it sent its own verack, as a loaded node may. Its acceptance is still
// known from its announcement: the watch counts as open only once the
// node answered a ping sent after the handshake (before, the transaction
// was given while the node did not yet relay to the watch, and the send
// failed as dropped after the 3 s timeout).
func TestSendWatchSlowVerack(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	const timeout = 3 * time.Second
	core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
	proxy := peertest.NewWatchProxy(t, core.Addr, node.Params.Net, peertest.WatchSlowVerack, nil)
	c := connectTo(t, node, timeout, proxy.Addr)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	elapsed := time.Since(start)
	t.Logf("%v after %v; result %+v", err, elapsed.Round(time.Millisecond), res)
	if err != nil || res.Announced[proxy.Addr] == 0 || !node.InMempool(t, tx.TxHash()) {
		t.Fatalf("error %v, result %+v: want the node's acceptance known from its announcement", err, res)
	}
	if elapsed > timeout/2 {
		t.Errorf("the send took %v", elapsed)
	}
}

// blind hides the node's transactions from the client: a transaction it
// serves becomes a notfound, its announcements are dropped. A peer
// behind it never holds or announces what the client sends.
func blind(m wire.Message) ([]wire.Message, bool) {
	switch m := m.(type) {
	case *wire.MsgTx:
		nf := wire.NewMsgNotFound()
		txid := m.TxHash()
		nf.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &txid))
		return []wire.Message{nf}, false
	case *wire.MsgInv:
		return nil, false
	}
	return []wire.Message{m}, false
}

// TestSendWatchLieUncounts: a peer whose own connection truthfully
// serves the transaction once its node took it (HasTx says yes), and
// whose announcement connection then serves another transaction for
// the txid announced, proves a lie: it is banned, counts neither as
// accepted nor as seen, its false announcement is its failure, and
// since the only other peer (one that never shows the transaction)
// took nothing, the send fails naming both (before, the liar stayed in
// Accepted, the lie was a warning saying "not counted", and the send
// succeeded).
func TestSendWatchLieUncounts(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, orderTriesBlocks)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	const timeout = 2 * time.Second
	liar := peertest.NewWatchProxy(t, node.P2PAddr, node.Params.Net, peertest.WatchServes, other)
	dark := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, blind, peertest.AlsoSees(wire.CmdInv))
	c, res, err := sendGivenFirst(t, node, liar.Addr, func() *Client { return connectTo(t, node, timeout, liar.Addr, dark.Addr) })
	if err == nil || !errors.Is(err, peer.ErrFalseAnnouncement) || !strings.Contains(err.Error(), other.TxHash().String()) ||
		!strings.Contains(err.Error(), dark.Addr) {
		t.Errorf("error %v: want the send failed, naming the false announcement and the other peer", err)
	}
	if slices.Contains(res.Accepted, liar.Addr) || slices.Contains(res.Seen, liar.Addr) || !errors.Is(res.Failed[liar.Addr], peer.ErrFalseAnnouncement) {
		t.Errorf("result %+v: want the liar in Failed alone", res)
	}
	if _, banned := c.pool.IsBanned(liar.Addr); !banned {
		t.Errorf("the liar is not banned (bans %+v)", c.Bans())
	}
}

// sendGivenFirst sends a new transaction of node's with a client of its
// own each time (connect makes it: a send another peer was given first
// may have banned a liar already) until first is the peer given it
// first, at most maxOrderTries times (the order is random), and returns
// that send's client, result and error.
func sendGivenFirst(t *testing.T, node *peertest.Node, first string, connect func() *Client) (*Client, *SendResult, error) {
	t.Helper()
	for try := 1; try <= maxOrderTries; try++ {
		c := connect()
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		start := time.Now()
		res, err := c.SendTransaction(context.Background(), tx)
		t.Logf("try %d: %v after %v; result %+v", try, err, time.Since(start).Round(time.Millisecond), res)
		if res != nil && len(res.Given) > 0 && res.Given[0] == first {
			return c, res, err
		}
	}
	t.Fatalf("%s was never given the transaction first in %d sends", first, maxOrderTries)
	return nil, nil, nil
}

// maxOrderTries bounds the sends sendGivenFirst makes, and those of
// the other tests repeated until the random order of the turns gives
// the case they need: with two peers, the chance that one is never
// given the transaction first is 2^-20, about 1 in a million (at 8, it
// was 1 in 256: a failure every few hundred runs of each test that
// uses it).
const maxOrderTries = 20

// orderTriesBlocks is how many blocks a node mines so that a test can
// spend one coinbase of its own and give sendGivenFirst one for each of
// its maxOrderTries sends (a coinbase matures after 100 blocks). With
// 110, ten sends were all there were: under load, when the order gave
// the liar the first turn in none of ten, the test ran out of coins
// ("no mature unspent coinbase") instead of trying again.
const orderTriesBlocks = 100 + maxOrderTries + 1

// TestSendMinedWatchFloods: a send that ends with the transaction found
// in the chain still looks at the peers' watches: one whose watch
// flooded is banned and named in the warnings (before, the mined path
// returned without looking, and the flood went unbanned and unnamed).
func TestSendMinedWatchFloods(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	node.Confirm(t, tx)
	node.Generate(t, 3)
	proxy := peertest.NewWatchProxy(t, node.P2PAddr, node.Params.Net, peertest.WatchFloods, nil)
	c := connectTo(t, node, 10*time.Second, proxy.Addr)
	res, err := c.SendTransaction(context.Background(), tx)
	if err != nil || res.Mined == nil {
		t.Fatalf("error %v, result %+v: want the transaction found mined", err, res)
	}
	if _, banned := c.pool.IsBanned(proxy.Addr); !banned {
		t.Errorf("the flooding peer is not banned (bans %+v)", c.Bans())
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, peer.ErrFlooding.Error()) }) {
		t.Errorf("warnings %q: want the flood named", res.Warnings)
	}
}

// TestWatchOpenWait: a turn waits watchOpenWait for its peer's watch
// when dialling directly, longer through a SOCKS5 proxy (half the
// timeout), and never beyond the timeout.
func TestWatchOpenWait(t *testing.T) {
	tests := []struct {
		proxy   string
		timeout time.Duration
		want    time.Duration
	}{
		{"", 30 * time.Second, watchOpenWait},
		{"", time.Second, time.Second},
		{"socks5://127.0.0.1:9050", 30 * time.Second, 15 * time.Second},
		{"socks5://127.0.0.1:9050", 3 * time.Second, watchOpenWait},
		{"socks5://127.0.0.1:9050", time.Second, time.Second},
	}
	for _, tt := range tests {
		c := &Client{cfg: Config{Proxy: tt.proxy, Timeout: tt.timeout}}
		if got := c.watchOpenWait(); got != tt.want {
			t.Errorf("proxy %q, timeout %v: waits %v, want %v", tt.proxy, tt.timeout, got, tt.want)
		}
	}
}

// TestSendWaitsForHeardCheck: a peer counted on its own connection's
// word, whose watch heard the node's announcement before the send ended
// and then serves another transaction for it, is not counted: the send
// waits for the check of what a watch heard (before, it ended first, and
// the liar stayed in Seen, neither named nor banned). The liar answers
// every getdata of a transaction a second late, on its own connection
// too, so that the announcement is heard while its mempool's answer is
// awaited.
func TestSendWaitsForHeardCheck(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, orderTriesBlocks)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	const timeout = 3 * time.Second
	liar := peertest.NewWatchProxy(t, node.P2PAddr, node.Params.Net, peertest.WatchServesLate, other)
	c, res, err := sendGivenFirst(t, node, node.P2PAddr, func() *Client { return connectTo(t, node, timeout, node.P2PAddr, liar.Addr) })
	if err != nil || !slices.Contains(res.Accepted, node.P2PAddr) {
		t.Fatalf("error %v, result %+v: want the honest node's acceptance", err, res)
	}
	if slices.Contains(res.Accepted, liar.Addr) || slices.Contains(res.Seen, liar.Addr) || !errors.Is(res.Failed[liar.Addr], peer.ErrFalseAnnouncement) {
		t.Errorf("result %+v: want the liar in Failed, out of Accepted and Seen", res)
	}
	if _, banned := c.pool.IsBanned(liar.Addr); !banned {
		t.Errorf("the liar is not banned (bans %+v)", c.Bans())
	}
}
