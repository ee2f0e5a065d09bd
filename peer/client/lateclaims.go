package client

import (
	"sync"

	"github.com/spvfilter/spvfilter/peer/pool"
)

// lateClaims are the heights peers newly claimed by announcing blocks the
// chain held already. The filter headers of a new block are verified with
// the peers that hold it then, and what is verified is not asked again: a
// peer whose announcements always come after the others' (a slower link)
// would never be asked, and faster peers agreeing on a lie would never
// meet its word. So the heights a peer claimed late are verified again,
// with every peer that holds them (see Client.verifyLate). One height a
// member, the lowest: bounded by the pool.
type lateClaims struct {
	mu   sync.Mutex
	from map[*pool.Member]int32
}

// add notes that m claimed the heights from from on late.
func (l *lateClaims) add(m *pool.Member, from int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.from == nil {
		l.from = map[*pool.Member]int32{}
	}
	if h, ok := l.from[m]; !ok || from < h {
		l.from[m] = from
	}
}

// take returns the late claims noted and forgets them.
func (l *lateClaims) take() map[*pool.Member]int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.from
	l.from = nil
	return out
}

// risenTips finds the peers whose tips rose since it last looked, however
// they rose: an announcement of a block the chain held (see
// Client.announced) or a header sync that answered one the chain lacked
// when it came and held by the time that peer's headers were read.
// Either way the heights are claimed late if they were verified without
// that peer (see lateClaims). It is the service's, used from its
// goroutine alone.
type risenTips struct {
	seen map[*pool.Member]int32
}

// note adds to late the heights each live peer of ms claimed since the
// last look, within tipWindow of its tip then; a peer seen for the first
// time claims nothing (its tip is where verification starts).
func (r *risenTips) note(ms []*pool.Member, tip func(*pool.Member) int32, late *lateClaims) {
	if r.seen == nil {
		r.seen = map[*pool.Member]int32{}
	}
	now := make(map[*pool.Member]int32, len(ms))
	for _, m := range ms {
		h := tip(m)
		now[m] = h
		if old, ok := r.seen[m]; ok && old >= 0 && old < h && h-old <= tipWindow {
			late.add(m, old+1)
		}
	}
	r.seen = now
}
