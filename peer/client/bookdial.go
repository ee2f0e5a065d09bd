package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spvfilter/spvfilter/peer"
)

// connectDeadline bounds a connection to an address found in the address
// book, a DNS seed or gossip: the dial and the handshake, as Bitcoin
// Core's -timeout (5 s) does. A peer the user gives has the whole
// Config.Timeout; an address nobody vouches for that has not answered by
// then is not waited for.
const connectDeadline = 5 * time.Second

// maxDialsAtOnce bounds the addresses a discovery dials at once.
const maxDialsAtOnce = 16

// bookDial is one discovery: it dials addresses from the address book
// (the DNS seeds asked when the book has none to offer) in parallel, up
// to twice as many at once as peers are still wanted, a new one as soon
// as one fails, until enough are connected, none is left, or one connect
// deadline has passed since it began: a discovery never costs more, however
// many addresses do not answer. Each dial counts as an attempt in the
// book and each connection as a success (addressBook.attempt, good), so
// that an address that fails is picked later, as btcd's addrmgr weighs
// its failed attempts.
type bookDial struct {
	c    *Client
	want int
	// What it did, for the warning: addresses dialled, connected, and
	// those that did not answer by the deadline; how long it took.
	tried, connected, silent int
	took                     time.Duration
	problems                 []error
}

// connectDeadline returns the deadline of a connection to an address
// found: connectDeadline, or the timeout if shorter.
func (c *Client) connectDeadline() time.Duration { return min(connectDeadline, c.timeout()) }

// run dials as bookDial describes.
func (d *bookDial) run(ctx context.Context) {
	start := time.Now()
	deadline := d.c.connectDeadline()
	dctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	done := make(chan *member)
	inflight, seeded := 0, false
	tried := map[string]bool{} // each address once
	// A dial started with less than a quarter of the deadline left would
	// rarely finish its handshake.
	last := start.Add(deadline - deadline/4)
	for {
		for d.connected < d.want && inflight < min(maxDialsAtOnce, 2*(d.want-d.connected)) && time.Now().Before(last) {
			cands := d.c.candidates(1, tried)
			if len(cands) == 0 && !seeded {
				seeded = true
				d.problems = append(d.problems, d.c.seed(dctx)...)
				cands = d.c.candidates(1, tried)
			}
			if len(cands) == 0 {
				break
			}
			m := cands[0]
			tried[m.addr] = true
			inflight++
			d.tried++
			go func() {
				d.c.dialMember(dctx, m)
				done <- m
			}()
		}
		if inflight == 0 {
			break
		}
		m := <-done
		inflight--
		d.c.mu.Lock()
		live, err := m.isLive(), m.err
		d.c.mu.Unlock()
		if live {
			if d.connected++; d.connected >= d.want {
				cancel() // the others are not needed
			}
			continue
		}
		if (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, peer.ErrStalled)) && ctx.Err() == nil {
			d.silent++
			err = fmt.Errorf("peer %s: no handshake within the connect deadline of %v", m.addr, deadline)
		}
		if !errors.Is(err, context.Canceled) {
			d.problems = append(d.problems, err)
		}
		d.c.forget(m)
	}
	d.took = time.Since(start)
}

// warning says what the discovery cost, if addresses failed it.
func (d *bookDial) warning() string {
	if d.tried == d.connected {
		return ""
	}
	return fmt.Sprintf("discovery: %d address(es) from the address book, DNS seeds or gossip tried, %d connected, %d did not answer within the %v connect deadline (%v spent)",
		d.tried, d.connected, d.silent, d.c.connectDeadline(), d.took.Round(time.Millisecond))
}
