package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// hangUpOnAsk starts a loopback relay to the node at target that passes
// the node's bytes on as they come and the client's message by message,
// until the client's nth getdata of blocks on a connection: that one it
// does not pass on, and it hangs up both sides at once. The client's
// requests before it are answered whole, and the nth is in flight when
// the connection ends, never before: no race with the client seeing the
// end first. It returns the relay's address and how many such hang-ups
// it made.
func hangUpOnAsk(t *testing.T, target string, nth int) (string, *atomic.Int32) {
	t.Helper()
	var ends atomic.Int32
	addr := hangUpOnClient(t, target, func() func(string, []byte) bool {
		asks := 0
		return func(cmd string, body []byte) bool {
			if cmd != wire.CmdGetData || !asksBlocks(body) {
				return false
			}
			if asks++; asks != nth {
				return false
			}
			ends.Add(1)
			return true
		}
	})
	return addr, &ends
}

// hangUpOnClient starts a loopback relay to the node at target that
// passes the node's bytes on as they come and the client's message by
// message, asking each connection's hangUp (newHangUp's, one a
// connection) about each: the first it reports true for is not passed
// on, and the relay hangs up both sides at once. It returns the relay's
// address.
func hangUpOnClient(t *testing.T, target string, newHangUp func() func(cmd string, body []byte) bool) string {
	t.Helper()
	addr, _ := listenLoopback(t, func(g *gateConns, c net.Conn) {
		u, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		g.add(u)
		hangUp := newHangUp()
		go io.Copy(c, u)
		go func() {
			defer c.Close()
			defer u.Close()
			hdr := make([]byte, 24)
			for {
				if _, err := io.ReadFull(c, hdr); err != nil {
					return
				}
				body := make([]byte, binary.LittleEndian.Uint32(hdr[16:20]))
				if _, err := io.ReadFull(c, body); err != nil {
					return
				}
				if hangUp(strings.TrimRight(string(hdr[4:16]), "\x00"), body) {
					return
				}
				if _, err := u.Write(append(hdr, body...)); err != nil {
					return
				}
			}
		}()
	})
	return addr
}

// hangUpsOnAsk starts n relays to the fixture's node, each hanging up on
// the client's nth getdata of blocks on a connection (see hangUpOnAsk),
// and returns their addresses and hang-up counts.
func hangUpsOnAsk(t *testing.T, n, nth int) ([]string, []*atomic.Int32) {
	t.Helper()
	var addrs []string
	var ends []*atomic.Int32
	for range n {
		addr, e := hangUpOnAsk(t, fx.node.P2PAddr, nth)
		addrs, ends = append(addrs, addr), append(ends, e)
	}
	return addrs, ends
}

// waitServing waits until the pool lists each peer of addrs as live (Run
// dials a peer that hung up again after its backoff), over a connection
// not ended (one that ended, Run not yet noticing, would be left out of
// a plan), holding the chain up to reach.
func waitServing(ctx context.Context, t *testing.T, c *Client, reach int32, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		m := clientMember(t, c, addr)
		for len(c.pool.Keep([]*pool.Member{m})) == 0 || c.pool.Conn(m) == nil || c.pool.Conn(m).Err() != nil || c.views.tip(m) < reach {
			if ctx.Err() != nil {
				t.Fatalf("%s never live again: %+v", addr, c.pool.Status(m))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// notCharged fails t if the peers at liars were dropped (dropped times,
// for why) or are banned, or the peer at honest, if set, was charged
// for them (see unharmedAt).
func notCharged(t *testing.T, c *Client, liars []string, dropped int, why, honest string) {
	t.Helper()
	if dropped > 0 {
		t.Errorf("liars dropped %d times for %s", dropped, why)
	}
	for _, addr := range liars {
		if st := c.pool.Status(clientMember(t, c, addr)); st.Banned {
			t.Errorf("%s banned: %s", addr, st.Reason)
		}
	}
	if honest != "" {
		unharmedAt(t, c, honest)
	}
}

// asksBlocks reports whether body, a getdata's payload, asks for blocks.
func asksBlocks(body []byte) bool {
	var m wire.MsgGetData
	if err := m.BtcDecode(bytes.NewReader(body), wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		return false
	}
	return slices.ContainsFunc(m.InvList, func(iv *wire.InvVect) bool {
		return iv.Type == wire.InvTypeBlock || iv.Type == wire.InvTypeWitnessBlock
	})
}

// TestInFlightEndReplanned: peers that take a download's requests and
// hang up while the second is in flight (its getdata received, nothing
// answered), on every connection. Each such peer is given two requests
// (the download's blocks spread over it and an honest peer holding
// every block; a peer behind the range widens the window of FetchBlocks
// without holding any of its blocks). Its second request fails with the
// connection's end (peer.ErrDisconnected), not a refusal: the client sent
// it before the end, every round. A node's hang-up proves no lie: the
// blocks it did not deliver are to be asked of the honest peer, every
// fetch succeeding with every block right, the peer that hung up named,
// neither dropped nor banned, the honest one unharmed. With no honest
// peer, the fetch fails with ErrNoPeers naming each peer's end, dropping
// and banning none.
func TestInFlightEndReplanned(t *testing.T) {
	needFixture(t)
	behind := needBehind(t)
	const from = behindHeight + 1
	for _, tt := range []struct {
		name   string
		liars  int  // peers hanging up with a request in flight
		honest bool // an honest peer holding every block beside them
	}{
		{"one peer hangs up", 1, true},
		{"two peers hang up", 2, true},
		{"every peer hangs up", 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liars, ends := hangUpsOnAsk(t, tt.liars, 2)
			peers := append(slices.Clone(liars), behind.P2PAddr)
			if tt.honest {
				peers = append(peers, fx.node.P2PAddr)
			}
			// At most one window of the live peers, spread evenly over the
			// peers holding the blocks: more than one request's worth
			// each.
			to := min(fx.tip, int32(from+len(peers)*peer.MaxBlocksPerRequest-1))
			if holders := len(peers) - 1; int(to-from+1) <= holders*peer.MaxBlocksPerRequest {
				t.Fatalf("the fixture's chain ends at %d: blocks %d..%d are too few to give each of %d peers two requests", fx.tip, from, to, holders)
			}
			log := &linesLog{t: t, start: time.Now()}
			c := connectWith(t, Config{Peers: peers, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// liveAgain waits until the pool dialled the liars again (Run,
			// after their backoff) and lists them with the range: else the
			// plan leaves them out, or the window is narrower.
			liveAgain := func() {
				t.Helper()
				waitServing(ctx, t, c, to, slices.DeleteFunc(slices.Clone(peers), func(a string) bool { return a == behind.P2PAddr })...)
				waitServing(ctx, t, c, behindHeight, behind.P2PAddr)
			}
			const rounds = 4
			failed, allEnded := 0, 0
			for round := range rounds {
				liveAgain()
				before := make([]int32, len(ends))
				for i, n := range ends {
					before[i] = n.Load()
				}
				got := int32(from)
				err := c.FetchBlocks(ctx, from, to, func(h int32, b *wire.MsgBlock) error {
					if h != got || b.BlockHash() != c.chain.Hash(h) {
						t.Errorf("round %d: height %d: block %v, want height %d's %v", round, h, b.BlockHash(), got, c.chain.Hash(got))
					}
					got++
					return nil
				})
				ended := true
				for i, n := range ends {
					ended = ended && n.Load() > before[i]
				}
				if ended {
					allEnded++
				}
				t.Logf("round %d: every liar hung up with a request in flight %v; %d blocks: %v", round, ended, got-from, err)
				switch {
				case !ended:
					t.Errorf("round %d: not every liar was given a second request to hang up on", round)
				case tt.honest && (err != nil || got != to+1):
					failed++
					t.Errorf("round %d: %d of %d blocks: %v", round, got-from, to-from+1, err)
				case !tt.honest:
					named := err != nil
					for _, addr := range liars {
						named = named && strings.Contains(err.Error(), "peer "+addr+": getdata block: "+peer.ErrDisconnected.Error())
					}
					var pe *peer.PeerError
					if !errors.Is(err, ErrNoPeers) || !errors.Is(err, peer.ErrDisconnected) || !errors.As(err, &pe) || !named {
						failed++
						t.Errorf("round %d: %v, want ErrNoPeers naming the end of each of %v", round, err, liars)
					}
				}
			}
			dropped, noted := 0, 0
			for _, addr := range liars {
				dropped += log.count("dropped " + addr)
				noted += log.count("peer "+addr+": getdata block: "+peer.ErrDisconnected.Error(), "asked of the other peers")
			}
			t.Logf("%d fetches, every liar hanging up in flight in %d, %d not as they should; liars dropped %d times, their ends noted %d times",
				rounds, allEnded, failed, dropped, noted)
			if noted < allEnded*len(liars) {
				t.Errorf("the liars' ends noted %d times, want %d (each liar each round)", noted, allEnded*len(liars))
			}
			honest := ""
			if tt.honest {
				honest = fx.node.P2PAddr
			}
			notCharged(t, c, liars, dropped, "hanging up, which proves nothing", honest)
		})
	}
}

// TestInFlightEndSpreadNote: a scan's download (fetchBlocks with the
// operation's log) whose blocks are spread over an honest peer and one
// that hangs up with its second request in flight. The blocks the latter
// did not deliver are planned again over the honest peer, which is then
// asked for more than its share: the operation's log, which a scan's
// spread note and a rescan's sums are made of, is to count those blocks
// too, and note that the honest peer went over its share. Planned again
// over a throwaway log, they were missed: the tally said the honest peer
// was asked for its share only, and no note was written.
func TestInFlightEndSpreadNote(t *testing.T) {
	needFixture(t)
	liar, ends := hangUpOnAsk(t, fx.node.P2PAddr, 2)
	const from = behindHeight + 1
	to := int32(from + 3*peer.MaxBlocksPerRequest - 1) // 24 blocks each of 2: two requests
	if to > fx.tip {
		t.Fatalf("the fixture's chain ends at %d, below %d", fx.tip, to)
	}
	var heights []int32
	for h := int32(from); h <= to; h++ {
		heights = append(heights, h)
	}
	lines := &linesLog{t: t, start: time.Now()}
	c := connectWith(t, Config{Peers: []string{liar, fx.node.P2PAddr}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: lines})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	replanned := regexp.MustCompile(regexp.QuoteMeta("peer "+liar+": getdata block: ") + ".*: its ([0-9]+) blocks were asked of the other peers")
	const rounds = 3
	for round := range rounds {
		waitServing(ctx, t, c, to, liar, fx.node.P2PAddr)
		before := ends.Load()
		log := newScanLog()
		blocks, err := c.fetchBlocks(ctx, log, heights, nil)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i, b := range blocks {
			if b.BlockHash() != c.chain.Hash(heights[i]) {
				t.Errorf("round %d: height %d: block %v, want %v", round, heights[i], b.BlockHash(), c.chain.Hash(heights[i]))
			}
		}
		if ends.Load() == before {
			t.Fatalf("round %d: %s did not hang up with a request in flight: the attack did not run", round, liar)
		}
		again := -1
		for _, n := range log.notes {
			if m := replanned.FindStringSubmatch(n); m != nil {
				again, _ = strconv.Atoi(m[1])
			}
		}
		tally := log.fetches.tally
		honest, lied := tally.peers[fx.node.P2PAddr], tally.peers[liar]
		over := slices.ContainsFunc(log.fetches.notes, func(n string) bool {
			return WarningKindOf(n) == WarningFetchSpread && strings.Contains(n, "asked for more than")
		})
		t.Logf("round %d: %d blocks planned again; the log counts %d blocks asked: honest %+v, the liar %+v; spread notes %q",
			round, again, tally.total, honest, lied, log.fetches.notes)
		switch {
		case again <= 0:
			t.Errorf("round %d: no note of the liar's blocks planned again: %q", round, log.notes)
		case tally.total != len(heights)+again || honest.asked+lied.asked != tally.total:
			t.Errorf("round %d: the log counts %d blocks asked (honest %d, the liar %d), want %d: %d planned, %d planned again",
				round, tally.total, honest.asked, lied.asked, len(heights)+again, len(heights), again)
		case honest.asked <= honest.limit || !over:
			t.Errorf("round %d: the honest peer asked for %d of a share of %d; spread notes %q, want one of a peer over its share",
				round, honest.asked, honest.limit, log.fetches.notes)
		}
	}
	// A hang-up may cut off the service's header sync too, whose own
	// handling is not what is tested here (see TestDisputedBlockReplanned):
	// drops for a block's request are counted.
	if st, n := c.pool.Status(clientMember(t, c, liar)), lines.count("dropped "+liar, "getdata block"); st.Banned || n > 0 {
		t.Errorf("%s charged for hanging up (dropped %d times): %+v", liar, n, st)
	}
	unharmedAt(t, c, fx.node.P2PAddr)
}

// TestReplannable: which ends of a peer's block requests have their
// blocks planned over the other peers, charging the peer nothing (a
// refusal, a connection's end in flight), and which keep their own
// handling (a lie, damage, a flood, a stall, this side's own drop, a
// dial that failed).
func TestReplannable(t *testing.T) {
	const addr = "127.0.0.1:18444"
	getdata := func(format string, args ...any) error {
		return &peer.PeerError{Peer: addr, Op: "getdata block", Err: fmt.Errorf(format, args...)}
	}
	closed := getdata("%w: connection closed by the node", peer.ErrDisconnected)
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused for a request", &pool.NotDialledError{Peer: addr, Failures: 3, Wait: time.Second, Request: true, Err: closed}, true},
		{"closed by the node in flight", closed, true},
		{"reset by the node in flight", getdata("%w: %w", peer.ErrDisconnected, syscall.ECONNRESET), true},
		{"a write that failed", getdata("%w: sending getdata: broken pipe", peer.ErrDisconnected), true},
		{"dropped after another request failed", getdata("%w: connection dropped after an earlier error", peer.ErrDisconnected), true},
		{"a wait for the dial cut by the context", &pool.NotDialledError{Peer: addr, Failures: 3, Wait: time.Second, Err: context.DeadlineExceeded}, false},
		{"dropped by this side", getdata("%w: %w", peer.ErrDisconnected, peer.ErrAbandoned), false},
		{"a dial that failed", &peer.PeerError{Peer: addr, Op: peer.OpConnect, Err: fmt.Errorf("%w: connection refused", peer.ErrDisconnected)}, false},
		{"a handshake cut off", &peer.PeerError{Peer: addr, Op: peer.OpHandshake, Err: fmt.Errorf("%w: connection closed during the handshake", peer.ErrDisconnected)}, false},
		{"a damaged block", getdata("%w: block does not match its payload checksum", peer.ErrDamaged), false},
		{"a block not its header's", getdata("%w: not the block asked for", peer.ErrBadBlock), false},
		{"a protocol violation ending it", getdata("%w: undecodable", peer.ErrProtocol), false},
		{"a flood", getdata("%w: too many inv", peer.ErrFlooding), false},
		{"a stall", getdata("%w", &peer.TimeoutError{What: "no complete answer", Within: time.Second}), false},
		{"blocks withheld", getdata("%w: notfound", peer.ErrMissingBlocks), false},
		{"no peer error", errors.New("something else"), false},
		{"no error", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := replannable(tt.err); got != tt.want {
				t.Errorf("replannable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestJudgedNamesRefusals: the error an operation ends with once the
// peer whose request failed it is judged (judged): the failure's own
// error, and the requests refused or cut off before it in the same
// download named after it, found by errors.Is and errors.As; the
// refusals of another download (inside the failure's error) are not
// named twice, and an error holding no refusals is the failure's own.
func TestJudgedNamesRefusals(t *testing.T) {
	const liar, quitter = "127.0.0.1:18444", "127.0.0.1:18445"
	m := &pool.Member{}
	lie := &peer.PeerError{Peer: liar, Op: "getdata block", Err: fmt.Errorf("%w: not the block asked for", peer.ErrBadBlock)}
	end := &peer.PeerError{Peer: quitter, Op: "getdata block", Err: fmt.Errorf("%w: connection closed by the node", peer.ErrDisconnected)}
	refused := &pool.NotDialledError{Peer: quitter, Failures: 2, Wait: time.Second, Request: true, Err: end}
	inner := withRefusals(lie, []error{refused})
	for _, tt := range []struct {
		name  string
		f     *pool.Failure
		err   func(f *pool.Failure) error
		named []error // found with errors.Is beside the failure's error
		text  string  // the error's text
	}{
		{"a failure alone", &pool.Failure{Member: m, Err: lie},
			func(f *pool.Failure) error { return f }, nil, lie.Error()},
		{"a failure after a hang-up", &pool.Failure{Member: m, Err: lie},
			func(f *pool.Failure) error { return withRefusals(f, []error{end}) }, []error{peer.ErrDisconnected},
			lie.Error() + " (after requests refused or cut off, their blocks planned again: " + end.Error() + ")"},
		{"a failure after a refusal and a hang-up", &pool.Failure{Member: m, Err: lie},
			func(f *pool.Failure) error { return fmt.Errorf("client: %w", withRefusals(f, []error{refused, end})) },
			[]error{peer.ErrDisconnected},
			lie.Error() + " (after requests refused or cut off, their blocks planned again: " + refused.Error() + "; " + end.Error() + ")"},
		{"refusals of another download, inside the failure", &pool.Failure{Member: m, Err: inner},
			func(f *pool.Failure) error { return f }, nil, inner.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := judged(tt.err(tt.f), tt.f)
			if got.Error() != tt.text {
				t.Errorf("judged: %q, want %q", got, tt.text)
			}
			if !errors.Is(got, tt.f.Err) || !errors.Is(got, peer.ErrBadBlock) {
				t.Errorf("judged: %v does not hold the failure's error", got)
			}
			for _, e := range tt.named {
				if !errors.Is(got, e) {
					t.Errorf("judged: %v does not hold %v", got, e)
				}
			}
			var f *pool.Failure
			if errors.As(got, &f) {
				t.Errorf("judged: %v still holds the failure, to be judged again", got)
			}
		})
	}
}
