package pool

import (
	"time"

	"github.com/spvfilter/spvfilter/peer/banlist"
)

// A member found by discovery that the pool forgets (it failed too often,
// or its first dial failed) leaves a record of its host (banlist.HostKey:
// the host alone, host:port on loopback, as a ban is kept): its failures
// in a row (and how many of them were cut-offs as too slow, see
// Member.slow) and when it may be dialled again. Found again under an
// address of the same host (the book offers it again, under any port), it
// is not dialled before then, and it comes back with those failures, so its
// backoff goes on doubling (see redialBackoff): a node that hangs up on
// every connection is not dialled again and again with a clean record
// after each discovery, nor after each port it answers on. Two addresses
// of one host forgotten share one record, the worse: the more failures,
// the later dial. The records last the pool's life; at most maxRecords
// are kept: when one more comes, the one with the fewest failures goes,
// of those the one kept longest, so that addresses that failed once (a
// closed port of a gossiped address) cannot push out the record of a node
// that failed many times in a row.
type record struct {
	failures, slow int
	nextDial       time.Time
	seq            uint64 // the order records were kept in
}

// maxRecords bounds the records of forgotten members.
const maxRecords = 1024

// records are the records of the members found by discovery that a pool
// forgot, by host (see record). The pool's mu guards them.
type records struct {
	by  map[string]record
	seq uint64 // numbers the records as they are kept
}

// remember keeps the record of m, a member found by discovery that the
// pool forgets.
func (rs *records) remember(m *Member) {
	if rs.by == nil {
		rs.by = map[string]record{}
	}
	key := banlist.HostKey(m.addr)
	r, ok := rs.by[key]
	if !ok && len(rs.by) >= maxRecords {
		rs.evict()
	}
	if !ok || m.failures > r.failures {
		r.failures, r.slow = m.failures, m.slow
	}
	if !ok || m.nextDial.After(r.nextDial) {
		r.nextDial = m.nextDial
	}
	rs.seq++
	r.seq = rs.seq
	rs.by[key] = r
}

// evict forgets the record with the fewest failures, of those the one
// kept longest.
func (rs *records) evict() {
	first, fr := "", record{}
	for key, r := range rs.by {
		if first == "" || r.failures < fr.failures || r.failures == fr.failures && r.seq < fr.seq {
			first, fr = key, r
		}
	}
	delete(rs.by, first)
}

// notDue reports whether the host of addr was forgotten and may not be
// dialled yet at now.
func (rs *records) notDue(addr string, now time.Time) bool {
	r, ok := rs.by[banlist.HostKey(addr)]
	return ok && now.Before(r.nextDial)
}

// foundAgain returns a member for addr, found by discovery, with the
// record of its host if it was forgotten before.
func (rs *records) foundAgain(addr string) *Member {
	m := &Member{addr: addr, dialing: true}
	key := banlist.HostKey(addr)
	if r, ok := rs.by[key]; ok {
		m.failures, m.slow, m.nextDial = r.failures, r.slow, r.nextDial
		delete(rs.by, key)
	}
	return m
}
