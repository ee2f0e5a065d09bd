package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/addrbook"
)

// openBook opens the address book (in the data directory's network
// directory, or in memory), unless the client uses Config.Peers alone.
func (c *Client) openBook() error {
	if c.cfg.ConnectOnly {
		return nil
	}
	dir := ""
	if c.st != nil {
		dir = c.st.Dir()
	}
	book, notes, err := addrbook.Open(c.cfg.Params, dir, time.Now)
	if err != nil {
		return fmt.Errorf("client: address book: %w", err)
	}
	c.book = book
	for _, n := range notes {
		c.notes = append(c.notes, "address book: "+n)
	}
	return nil
}

// learn takes addresses a peer gossiped into the address book.
func (c *Client) learn(addrs []*wire.NetAddressV2, src string) {
	if c.book != nil {
		c.book.Add(addrs, src)
	}
}

// discover dials up to want more peers from the address book, asking the
// DNS seeds when the book has none to offer (see bookDial); it returns why
// peers could not be found, if it found fewer, and leaves a warning for
// the next result when addresses failed.
func (c *Client) discover(ctx context.Context, want int) []error {
	if c.book == nil || want <= 0 {
		return nil
	}
	d := &bookDial{c: c, want: want}
	d.run(ctx)
	if w := d.warning(); w != "" {
		c.mu.Lock()
		c.news = append(c.news, w)
		c.mu.Unlock()
	}
	if d.connected < want && len(d.problems) == 0 {
		d.problems = append(d.problems, errors.New("client: the address book has no more peers to try"))
	}
	return d.problems
}

// candidates picks up to n addresses to dial, each a new member, none in
// a network group already in use, nor in skip (those tried already).
func (c *Client) candidates(n int, skip map[string]bool) []*member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var inUse []string
	known := map[string]bool{}
	for _, m := range c.members {
		known[m.addr] = true
		if m.isLive() || m.dialing {
			inUse = append(inUse, m.addr)
		}
	}
	var out []*member
	for len(out) < n {
		addr, ok := c.book.Pick(c.cfg.Services, inUse, func(a string) bool {
			if known[a] || skip[a] {
				return true
			}
			_, banned := c.banOf(a)
			return banned || c.dial == nil && addrbook.IsOnion(a)
		})
		if !ok {
			break
		}
		known[addr] = true
		inUse = append(inUse, addr)
		m := &member{addr: addr, tip: -1, dialing: true}
		c.members = append(c.members, m)
		out = append(out, m)
	}
	return out
}

// forget removes a member found by discovery that could not be used.
func (c *Client) forget(m *member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.members {
		if o == m && !m.permanent && !m.banned {
			c.members = append(c.members[:i], c.members[i+1:]...)
			return
		}
	}
}

// seed asks the network's DNS seeds for peers and adds them to the book.
// Behind a proxy, the seeds are asked only through a Resolver given.
func (c *Client) seed(ctx context.Context) []error {
	resolve := c.cfg.Resolver
	if resolve == nil {
		if c.dial != nil {
			return []error{errors.New("client: the DNS seeds are not asked behind a proxy (their lookup would leave it): give peers, or a Resolver")}
		}
		resolve = addrbook.SystemResolver
	}
	addrs, errs := addrbook.Seed(ctx, c.cfg.Params, c.cfg.Services, resolve)
	c.book.Add(addrs, "dns seeds")
	return errs
}

// KnownAddresses lists the address book (nil with ConnectOnly). On the
// public networks it is the book as last saved (at open, every ten
// minutes, at Close).
func (c *Client) KnownAddresses() ([]addrbook.Known, error) {
	if c.book == nil {
		return nil, nil
	}
	ks, err := c.book.Known()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return ks, nil
}
