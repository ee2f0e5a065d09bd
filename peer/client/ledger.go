package client

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// The ledger records, per peer address, every request that tells a peer
// what the client looks at: the blocks asked for (getdata, served or
// not), the ranges of compact filters (getcfilters) and filter headers
// (getcfheaders) asked for, the blocks asked for filtered (BIP 37
// merkleblocks) and the Bloom filters loaded into it, as the peer holds
// them after each filteradd. A request is recorded before it goes out, so
// a failed one counts too: the request alone reveals it. It is what the
// leak report (what peers could conclude about the watch list) rests on.
// With a data directory it persists across runs (ledgerfile.go), since a
// node remembers an address across connections.
//
// It is bounded: past maxLedgerBytes of records in all, or maxLedgerAddrs
// addresses, what is not recorded marks the peer's entry (or the whole
// ledger) incomplete, and a report resting on it must say so.

const (
	// maxLedgerBytes bounds the records of all peers, as written.
	maxLedgerBytes = 16 << 20
	// maxLedgerAddrs bounds the addresses recorded.
	maxLedgerAddrs = 1024
	// maxLedgerFilters bounds the Bloom filters recorded per address:
	// beyond, the entry is incomplete.
	maxLedgerFilters = 64
)

// heightRange is the heights from..to, both included.
type heightRange struct{ from, to int32 }

// ledgerEntry is what one peer address was asked.
type ledgerEntry struct {
	filters  []heightRange    // getcfilters, joined where they touch
	headers  []heightRange    // getcfheaders, joined where they touch
	filtered []heightRange    // blocks asked for filtered (BIP 37)
	blocks   []chainhash.Hash // blocks asked for, in the order of their first request
	seen     map[chainhash.Hash]bool
	loaded   []*wire.MsgFilterLoad // Bloom filters as the peer held them, oldest first
	// incomplete: a record was dropped at a bound.
	incomplete bool
}

// ledger is the client's record of what each peer was asked, by address.
// It guards itself (a leaf lock: nothing is called with mu held).
type ledger struct {
	mu     sync.Mutex
	byAddr map[string]*ledgerEntry
	order  []string // addresses in the order of their first record
	size   int      // the records' bytes as written (see ledgerFile)
	// lost: records were lost (an address over maxLedgerAddrs, a damaged
	// file set aside), so every view may understate what peers saw.
	lost  bool
	dirty bool // changed since loaded or saved
}

// entry returns addr's entry, made on first use; nil when the ledger is
// full of addresses (lost is set). Called with mu held.
func (l *ledger) entry(addr string) *ledgerEntry {
	if e := l.byAddr[addr]; e != nil {
		return e
	}
	if len(l.order) >= maxLedgerAddrs || l.size+len(addr)+16 > maxLedgerBytes {
		l.lost = true
		return nil
	}
	if l.byAddr == nil {
		l.byAddr = map[string]*ledgerEntry{}
	}
	e := &ledgerEntry{seen: map[chainhash.Hash]bool{}}
	l.byAddr[addr] = e
	l.order = append(l.order, addr)
	l.size += len(addr) + 16
	l.dirty = true
	return e
}

// room takes n bytes of the bound for e, or marks e incomplete. Called
// with mu held.
func (l *ledger) room(e *ledgerEntry, n int) bool {
	if l.size+n > maxLedgerBytes {
		e.incomplete, l.dirty = true, true
		return false
	}
	l.size += n
	l.dirty = true
	return true
}

// addRange adds from..to to rs, joined with the ranges it overlaps or
// touches; it returns the ranges and how many more there are.
func addRange(rs []heightRange, from, to int32) ([]heightRange, int) {
	n := len(rs)
	out := rs[:0:0]
	for _, r := range rs {
		if r.to+1 < from || to+1 < r.from {
			out = append(out, r)
			continue
		}
		from, to = min(from, r.from), max(to, r.to)
	}
	out = append(out, heightRange{from, to})
	slices.SortFunc(out, func(a, b heightRange) int { return int(a.from - b.from) })
	return out, len(out) - n
}

// ranges records a range of compact filters (cmd getcfilters), filter
// headers (getcfheaders) or filtered blocks asked of addr.
func (l *ledger) ranges(addr, cmd string, from, to int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(addr)
	if e == nil {
		return
	}
	rs := &e.filters
	switch cmd {
	case wire.CmdGetCFHeaders:
		rs = &e.headers
	case wire.CmdMerkleBlock:
		rs = &e.filtered
	}
	out, more := addRange(*rs, from, to)
	if more > 0 && !l.room(e, more*10) {
		return
	}
	if !slices.Equal(out, *rs) {
		l.dirty = true
	}
	*rs = out
}

// asked records the blocks asked of addr.
func (l *ledger) asked(addr string, hashes []chainhash.Hash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(addr)
	if e == nil {
		return
	}
	for _, h := range hashes {
		if e.seen[h] {
			continue
		}
		if !l.room(e, chainhash.HashSize) {
			return
		}
		e.seen[h] = true
		e.blocks = append(e.blocks, h)
	}
}

// loaded records the Bloom filter addr holds now: f, loaded, or with add
// (the data of a filteradd) the last one recorded with add inserted.
func (l *ledger) loaded(addr string, f *bip37.Filter, add []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(addr)
	if e == nil {
		return
	}
	var msg *wire.MsgFilterLoad
	switch {
	case f != nil:
		msg = f.MsgFilterLoad()
	case len(e.loaded) == 0:
		e.incomplete, l.dirty = true, true // a filteradd of a filter not recorded
		return
	default:
		last := e.loaded[len(e.loaded)-1]
		held, err := bip37.NewFilterFromParams(slices.Clone(last.Filter), last.HashFuncs, last.Tweak, last.Flags)
		if err != nil {
			e.incomplete, l.dirty = true, true
			return
		}
		held.Add(add)
		msg = held.MsgFilterLoad()
		// The peer holds one filter: the one before the add is replaced.
		l.size -= len(last.Filter) + 12
		e.loaded = e.loaded[:len(e.loaded)-1]
	}
	if len(e.loaded) >= maxLedgerFilters || !l.room(e, len(msg.Filter)+12) {
		e.incomplete, l.dirty = true, true
		return
	}
	e.loaded = append(e.loaded, msg)
}

// wasAsked reports whether addr was asked for the block hash.
func (l *ledger) wasAsked(addr string, hash chainhash.Hash) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byAddr[addr]
	return e != nil && e.seen[hash]
}

// ledgerView is what one peer address was asked, with the blocks re-read
// as heights of the chain as it is now.
type ledgerView struct {
	addr string
	// filters, headers and filtered are the ranges asked (see
	// ledgerEntry).
	filters, headers, filtered []heightRange
	// fetched are the heights of the blocks asked for, ascending;
	// unknown counts those no longer in the chain.
	fetched []int32
	unknown int
	loaded  []*wire.MsgFilterLoad
	// incomplete: some of what it was asked is not recorded (a bound,
	// or records lost), so the view may understate what it saw.
	incomplete bool
}

// views returns what each address was asked, in the order of their first
// record.
func (l *ledger) views(ch *chain.Chain) []ledgerView {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ledgerView, 0, len(l.order))
	for _, addr := range l.order {
		e := l.byAddr[addr]
		v := ledgerView{addr: addr, filters: slices.Clone(e.filters), headers: slices.Clone(e.headers), filtered: slices.Clone(e.filtered),
			loaded: slices.Clone(e.loaded), incomplete: e.incomplete || l.lost}
		for _, h := range e.blocks {
			if height, ok := ch.HeightOf(h); ok {
				v.fetched = append(v.fetched, height)
			} else {
				v.unknown++
			}
		}
		slices.Sort(v.fetched)
		out = append(out, v)
	}
	return out
}

// askingConn is a peer's connection whose requests that reveal what the
// client looks at are recorded in the ledger before they go out.
type askingConn struct {
	*peer.Peer
	l     *ledger
	chain *chain.Chain
	addr  string
	// c and m, when set (Client.conn), have each request of compact
	// filters or blocks go over m's connection as it is then, dialled
	// again first if it has ended (see Client.ready), and once more if
	// the request met it dropped by another request of this client,
	// abandoned meanwhile (peer.ErrAbandoned: the requests of one
	// connection take turns, and a hedged request another peer won, or
	// a cancelled one, drops it).
	c *Client
	m *pool.Member
}

// over runs req over the connection (see askingConn).
func (a askingConn) over(ctx context.Context, req func(p *peer.Peer) error) error {
	for try := 0; ; try++ {
		p := a.Peer
		if a.c != nil {
			if err := a.c.ready(ctx, a.m); err != nil {
				return err
			}
			p = a.c.pool.Conn(a.m)
		}
		err := req(p)
		if a.c == nil || try > 0 || ctx.Err() != nil || !errors.Is(err, peer.ErrAbandoned) {
			return err
		}
	}
}

// GetBlocks records the blocks, then asks for them: recorded once the
// connection is ready (see over), so that blocks never asked, a redial
// having failed, are not.
func (a askingConn) GetBlocks(ctx context.Context, hashes []chainhash.Hash, fn func(i int, b *wire.MsgBlock) error) error {
	return a.over(ctx, func(p *peer.Peer) error {
		a.l.asked(a.addr, hashes)
		return p.GetBlocks(ctx, hashes, fn)
	})
}

// GetCFilters asks for the range start..the last block, and records it
// if the request was sent (see sentRange).
func (a askingConn) GetCFilters(ctx context.Context, start int32, blocks []chainhash.Hash, fn func(i int, data []byte) error) error {
	return a.over(ctx, func(p *peer.Peer) error {
		defer a.sentRange(p, start, blocks, p.BytesSent())
		return p.GetCFilters(ctx, start, blocks, fn)
	})
}

// sentRange records the getcfilters range start..the last block of
// blocks if p sent anything since it had sent before bytes: a request
// cancelled or failed before it was written (a feed's batch another peer
// took, a connection dropped) reached no node, and the leak report
// counts what the nodes saw.
func (a askingConn) sentRange(p *peer.Peer, start int32, blocks []chainhash.Hash, before uint64) {
	if len(blocks) > 0 && p.BytesSent() > before {
		a.l.ranges(a.addr, wire.CmdGetCFilters, start, start+int32(len(blocks))-1)
	}
}

// GetCFiltersSummed asks for the range start..the last block, and
// records it if the request was sent (see sentRange).
func (a askingConn) GetCFiltersSummed(ctx context.Context, start int32, blocks []chainhash.Hash, fn func(i int, data []byte, sum peer.PayloadSum) error) error {
	return a.over(ctx, func(p *peer.Peer) error {
		defer a.sentRange(p, start, blocks, p.BytesSent())
		return p.GetCFiltersSummed(ctx, start, blocks, fn)
	})
}

// GetCFHeaders records the range start..stop, then asks for it.
func (a askingConn) GetCFHeaders(ctx context.Context, start int32, stop chainhash.Hash, want int) (prev chainhash.Hash, hashes []chainhash.Hash, err error) {
	if to, ok := a.chain.HeightOf(stop); ok && to >= start {
		a.l.ranges(a.addr, wire.CmdGetCFHeaders, start, to)
	}
	err = a.over(ctx, func(p *peer.Peer) (err error) {
		prev, hashes, err = p.GetCFHeaders(ctx, start, stop, want)
		return err
	})
	return prev, hashes, err
}

// GetCFCheckpt asks for n checkpoints up to stop.
func (a askingConn) GetCFCheckpt(ctx context.Context, stop chainhash.Hash, n int) (cps []chainhash.Hash, err error) {
	err = a.over(ctx, func(p *peer.Peer) (err error) {
		cps, err = p.GetCFCheckpt(ctx, stop, n)
		return err
	})
	return cps, err
}

// GetFilteredBlocks records the blocks' heights, then asks for them.
func (a askingConn) GetFilteredBlocks(ctx context.Context, hashes []chainhash.Hash) ([]peer.FilteredBlock, error) {
	for _, h := range hashes {
		if height, ok := a.chain.HeightOf(h); ok {
			a.l.ranges(a.addr, wire.CmdMerkleBlock, height, height)
		}
	}
	return a.Peer.GetFilteredBlocks(ctx, hashes)
}

// LoadFilter records the filter, then loads it.
func (a askingConn) LoadFilter(ctx context.Context, f *bip37.Filter) error {
	a.l.loaded(a.addr, f, nil)
	return a.Peer.LoadFilter(ctx, f)
}

// AddToFilter records the peer's filter with data added, then sends it.
func (a askingConn) AddToFilter(ctx context.Context, data []byte) error {
	a.l.loaded(a.addr, nil, data)
	return a.Peer.AddToFilter(ctx, data)
}
