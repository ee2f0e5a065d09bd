package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// openBook opens the address book (in the data directory's network
// directory, or in memory), unless the client uses Config.Peers alone.
func (c *Client) openBook() error {
	if c.cfg.ConnectOnly {
		return nil
	}
	dir := ""
	if c.st != nil {
		dir = c.st.AddrBookDir()
	}
	book, notes, err := openAddressBook(c.cfg.Params, dir, time.Now)
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
		c.book.add(addrs, src)
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
		addr, ok := c.book.pick(c.cfg.Services, inUse, func(a string) bool {
			if known[a] || skip[a] {
				return true
			}
			_, banned := c.bannedLocked(a)
			return banned || c.dial == nil && isOnion(a)
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
		resolve = systemResolver
	}
	addrs, errs := seedAddresses(ctx, c.cfg.Params, c.cfg.Services, resolve)
	c.book.add(addrs, "dns seeds")
	return errs
}

// isOnion reports whether addr is a .onion host:port.
func isOnion(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && len(host) > 6 && host[len(host)-6:] == ".onion"
}

// systemResolver looks host up with the system's resolver.
func systemResolver(ctx context.Context, host string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", host)
}

// KnownAddress is an address in the client's address book.
type KnownAddress struct {
	Addr     string
	Services wire.ServiceFlag
	LastSeen time.Time
	// LastAttempt and LastSuccess are when it was last dialled, and last
	// connected (zero if never).
	LastAttempt, LastSuccess time.Time
	Attempts                 int
	// Tried: connected once at least.
	Tried bool
}

// KnownAddresses lists the address book (nil with ConnectOnly). On the
// public networks it is the book as last saved (at open, every ten
// minutes, at Close).
func (c *Client) KnownAddresses() ([]KnownAddress, error) {
	if c.book == nil {
		return nil, nil
	}
	ks, err := c.book.known()
	if err != nil {
		return nil, fmt.Errorf("client: address book: %w", err)
	}
	out := make([]KnownAddress, len(ks))
	for i, k := range ks {
		out[i] = KnownAddress(k)
	}
	return out, nil
}
