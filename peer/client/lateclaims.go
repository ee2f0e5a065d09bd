package client

import (
	"sync"
	"time"

	"github.com/spvfilter/spvfilter/peer/pool"
)

// lateClaims are the heights peers newly claimed once the chain held them
// already (see risenTips). The filter headers of a new block are verified
// with the peers that hold it then, and what is verified is not asked
// again: a peer whose announcements always come after the others' (a
// slower link) would never be asked, and faster peers agreeing on a lie
// would never meet its word. So a late peer's word on the heights it
// claimed late is asked, and where it differs they are verified again
// with every peer that holds them (see Client.verifyLate).
//
// A peer that gives no word within lateWait (btcd answers no getcfheaders
// while it catches up, nor one up to a block it does not hold yet) proves
// nothing, neither a lie nor the heights: its claim is kept and asked
// again after a backoff that doubles with each silence (lateBackoff), so
// that a peer that stays silent stalls the service lateWait at most once
// a backoff, and a slow honest peer's word is still had once it answers.
// One height a member, the lowest: bounded by the pool.
type lateClaims struct {
	mu     sync.Mutex
	from   map[*pool.Member]int32
	silent map[*pool.Member]silentClaim
}

// silentClaim is the claim of a peer that gave no word on it: the heights
// from from on, asked again at next; silences counts them in a row.
type silentClaim struct {
	from     int32
	silences int
	next     time.Time
}

// The late claims' timing: a late peer has lateWait to give its word (a
// getcfheaders of one hash, which an honest node answers at once), and a
// silent one is asked again after lateWait, then twice as long each time,
// up to maxLateBackoff.
const (
	lateWait       = 2 * time.Second
	maxLateBackoff = 5 * time.Minute
)

// lateBackoff returns how long a claim whose peer was silent silences
// times in a row waits before it is asked again.
func lateBackoff(silences int) time.Duration {
	d := lateWait
	for i := 1; i < silences && d < maxLateBackoff; i++ {
		d *= 2
	}
	return min(d, maxLateBackoff)
}

// add notes that m claimed the heights from from on late. A claim of a
// peer that was silent waits for its turn (see silentClaim), however
// many new blocks it claims meanwhile.
func (l *lateClaims) add(m *pool.Member, from int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.silent[m]; ok {
		s.from = min(s.from, from)
		l.silent[m] = s
		return
	}
	if l.from == nil {
		l.from = map[*pool.Member]int32{}
	}
	if h, ok := l.from[m]; !ok || from < h {
		l.from[m] = from
	}
}

// take returns the late claims to ask now, those of silent peers whose
// turn came included, and forgets them (a silent peer's count of
// silences is kept until it answers, see answered).
func (l *lateClaims) take(now time.Time) map[*pool.Member]int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.from
	l.from = nil
	for m, s := range l.silent {
		if now.Before(s.next) {
			continue
		}
		if out == nil {
			out = map[*pool.Member]int32{}
		}
		if h, ok := out[m]; !ok || s.from < h {
			out[m] = s.from
		}
		s.next = time.Time{}
		l.silent[m] = s
	}
	return out
}

// unanswered notes that m gave no word on its claim of the heights from
// from on: it is asked again after its backoff.
func (l *lateClaims) unanswered(m *pool.Member, from int32, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.silent == nil {
		l.silent = map[*pool.Member]silentClaim{}
	}
	s := l.silent[m]
	if s.silences == 0 || from < s.from {
		s.from = from
	}
	s.silences++
	s.next = now.Add(lateBackoff(s.silences))
	l.silent[m] = s
}

// answered forgets that m was silent: it gave its word, or its claim is
// settled otherwise (it is banned, or gone from the pool).
func (l *lateClaims) answered(m *pool.Member) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.silent, m)
}

// silences returns how many times in a row m gave no word on its claim.
func (l *lateClaims) silences(m *pool.Member) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.silent[m].silences
}
