package client

import (
	"sync"

	"github.com/spvfilter/spvfilter/peer/pool"
)

// lateClaims are the heights peers newly claimed once the chain held them
// already (see risenTips). The filter headers of a new block are verified
// with the peers that hold it then, and what is verified is not asked
// again: a peer whose announcements always come after the others' (a
// slower link) would never be asked, and faster peers agreeing on a lie
// would never meet its word. So a late peer's word on the heights it
// claimed late is asked, and where it differs they are verified again
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
