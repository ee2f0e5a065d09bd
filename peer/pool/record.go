package pool

import "time"

// A member found by discovery that the pool forgets (it failed too often,
// or its first dial failed) leaves a record of its address: its failures
// in a row and when it may be dialled again. Found again under the same
// address (the book offers it again), it is not dialled before then, and
// it comes back with those failures, so its backoff goes on doubling
// (see redialBackoff): a node that hangs up on every connection is not
// dialled again and again with a clean record after each discovery. The
// records last the pool's life; at most maxRecords are kept, the one due
// soonest forgotten first.
type record struct {
	failures int
	nextDial time.Time
}

// maxRecords bounds the records of forgotten members.
const maxRecords = 1024

// rememberLocked keeps the record of m, a member found by discovery that
// the pool forgets. Called with mu held.
func (p *Pool) rememberLocked(m *Member) {
	if p.records == nil {
		p.records = map[string]record{}
	}
	if _, ok := p.records[m.addr]; !ok && len(p.records) >= maxRecords {
		first := ""
		for addr, r := range p.records {
			if first == "" || r.nextDial.Before(p.records[first].nextDial) {
				first = addr
			}
		}
		delete(p.records, first)
	}
	p.records[m.addr] = record{failures: m.failures, nextDial: m.nextDial}
}

// notDueLocked reports whether addr was forgotten and may not be dialled
// yet at now. Called with mu held.
func (p *Pool) notDueLocked(addr string, now time.Time) bool {
	r, ok := p.records[addr]
	return ok && now.Before(r.nextDial)
}

// foundAgainLocked returns a member for addr, found by discovery, with
// the record of its address if it was forgotten before. Called with mu
// held.
func (p *Pool) foundAgainLocked(addr string) *Member {
	m := &Member{addr: addr, dialing: true}
	if r, ok := p.records[addr]; ok {
		m.failures, m.nextDial = r.failures, r.nextDial
		delete(p.records, addr)
	}
	return m
}
