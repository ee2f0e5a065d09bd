package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// abandonRequest drops m's connection the way the client's own cancelling
// does when another peer answers first: a request whose context ends
// while its answer is coming in.
func abandonRequest(t *testing.T, c *Client, m *pool.Member) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hashes := make([]chainhash.Hash, 16)
	for i := range hashes {
		hashes[i] = c.chain.Hash(int32(i + 1))
	}
	err := c.pool.Conn(m).GetBlocks(ctx, hashes, func(int, *wire.MsgBlock) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned request: %v", err)
	}
	select {
	case <-c.pool.Conn(m).Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned request did not drop the connection")
	}
}

// holdTurn starts a request of c's to m that holds the connection's turn
// (the requests of a connection take turns) until the returned function
// abandons it, which drops the connection, and waits for it to end.
func holdTurn(t *testing.T, c *Client, m *pool.Member) (abandon func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	holding := make(chan struct{})
	held := make(chan error, 1)
	go func() {
		first := true
		held <- c.pool.Conn(m).GetBlocks(ctx, []chainhash.Hash{c.chain.Hash(1), c.chain.Hash(2)}, func(int, *wire.MsgBlock) error {
			if first {
				first = false
				close(holding)
				<-ctx.Done()
			}
			return nil
		})
	}()
	<-holding
	return func() {
		t.Helper()
		cancel()
		if err := <-held; !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned request: %v", err)
		}
	}
}

// TestAbandonedChargesNobody: a request the client abandons drops its
// peer's connection, though the peer did nothing wrong. A request to that
// peer used to be sent over the dropped connection and fail with
// "connection dropped after an earlier error", which was charged to the
// peer (its status took it as the reason; during a dispute about a
// filter, it was a strike, and two such strikes banned the peer without
// proof). The CI met it as an honest peer dropped from a scan whose
// filter download another peer had won. Two ways of meeting the drop:
//
//   - TestAbandonedRequestChargesNobody: the request comes after the
//     drop, and dials the peer again first.
//   - TestAbandonedMeanwhileChargesNobody: the request found the
//     connection open and waits for its turn (the requests of a
//     connection take turns) while another request of the client's
//     holds it and is abandoned; dialling again before a request cannot
//     see a drop still to come. The peer's error says the client dropped
//     it (peer.ErrAbandoned), and the request dials again and is sent
//     once more.
func TestAbandonedChargesNobody(t *testing.T) {
	drops := []struct {
		name string
		when string
		// ask runs ask around the drop of m's connection, and returns
		// its error.
		ask func(t *testing.T, c *Client, m *pool.Member, ask func() error) error
	}{
		{"TestAbandonedRequestChargesNobody", "after an abandoned request", func(t *testing.T, c *Client, m *pool.Member, ask func() error) error {
			abandonRequest(t, c, m)
			return ask()
		}},
		{"TestAbandonedMeanwhileChargesNobody", "while another request was abandoned", func(t *testing.T, c *Client, m *pool.Member, ask func() error) error {
			abandon := holdTurn(t, c, m)
			asked := make(chan error, 1)
			go func() { asked <- ask() }()
			time.Sleep(300 * time.Millisecond) // the ask waits for its turn
			abandon()
			return <-asked
		}},
	}
	asks := abandonedAsks(t)
	for _, drop := range drops {
		t.Run(drop.name, func(t *testing.T) {
			for _, tt := range asks {
				t.Run(tt.name, func(t *testing.T) {
					c := connect(t, 10*time.Second)
					ms := c.pool.Members()
					if len(ms) != 1 {
						t.Fatalf("%d members", len(ms))
					}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := drop.ask(t, c, ms[0], func() error { return tt.ask(ctx, c) }); err != nil {
						t.Fatalf("a request %s: %v", drop.when, err)
					}
					st := c.pool.Status(ms[0])
					if !st.Live || st.Banned || st.Reason != "" {
						t.Errorf("the peer %s: %+v", drop.when, st)
					}
				})
			}
		})
	}
}

// abandonedAsk is a request of the client's that picks a given peer.
type abandonedAsk struct {
	name string
	ask  func(ctx context.Context, c *Client) error
}

// abandonedAsks returns the requests of the client that ask the one peer
// of a fixture client for a block or a filter.
func abandonedAsks(t *testing.T) []abandonedAsk {
	t.Helper()
	needFixture(t)
	h := fx.tip - 5
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fx.node.RPC().GetCFilter(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	filterHash := chainhash.DoubleHashH(f.Data)
	return []abandonedAsk{
		{"GetBlock", func(ctx context.Context, c *Client) error {
			_, err := c.GetBlock(ctx, c.chain.Hash(h))
			return err
		}},
		{"GetCFilter", func(ctx context.Context, c *Client) error {
			_, err := c.GetCFilter(ctx, c.chain.Hash(h))
			return err
		}},
		{"FetchBlocks", func(ctx context.Context, c *Client) error {
			return c.FetchBlocks(ctx, h, h+2, func(int32, *wire.MsgBlock) error { return nil })
		}},
		{"fetchBlock (a disputed block)", func(ctx context.Context, c *Client) error {
			_, err := c.fetchBlock(ctx, nil, h)
			return err
		}},
		{"evidence (a disputed filter)", func(ctx context.Context, c *Client) error {
			m := c.pool.Members()[0]
			data, err := c.evidence(ctx, h, hashGroup{rep: m, members: []*pool.Member{m}, hash: filterHash})
			if err == nil && data == nil {
				return errors.New("the peer did not serve the filter it stated (a strike)")
			}
			return err
		}},
	}
}

// TestAbandonedMeanwhileSendGives: a send whose peer's connection is
// dropped by another request of the client's, abandoned while the send
// waited for its turn on it (a chain search's hedged request, say), still
// gives the node the transaction: it used to ask and give over the
// dropped connection, fail, and report the honest node failed.
func TestAbandonedMeanwhileSendGives(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("carol").P2WPKHScript()))
	c := connectTo(t, node, 10*time.Second)
	ms := c.pool.Members()
	if len(ms) != 1 {
		t.Fatalf("%d members", len(ms))
	}
	abandon := holdTurn(t, c, ms[0])
	type sent struct {
		res *SendResult
		err error
	}
	done := make(chan sent, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		res, err := c.SendTransaction(ctx, tx)
		done <- sent{res, err}
	}()
	time.Sleep(300 * time.Millisecond) // the send waits for its turn
	abandon()
	r := <-done
	if r.err != nil || !slices.Contains(r.res.Accepted, node.P2PAddr) {
		t.Fatalf("the send after another request was abandoned: %v; %+v", r.err, r.res)
	}
	if !node.InMempool(t, tx.TxHash()) {
		t.Errorf("the node did not get the transaction")
	}
	if st := c.pool.Status(ms[0]); !st.Live || st.Banned || st.Reason != "" {
		t.Errorf("the peer after the send: %+v", st)
	}
}
