package client

import (
	"context"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
// A late peer's word is asked in the background (see ask): the service
// goes on with the next block meanwhile, and takes the words in once they
// came (words), so that a late peer, however slow, holds no new block.
// One word a member is asked at a time.
//
// A peer that gives no word within lateWait (btcd answers no getcfheaders
// while it catches up, nor one up to a block it does not hold yet) proves
// nothing, neither a lie nor the heights: its claim is kept and asked
// again after a backoff that doubles with each silence (lateBackoff; the
// service wakes for it, see turnTimer), and until it answers, the heights
// from its claim on are verified without it (see reachFor): being silent
// buys no say, and costs the wallet's next block nothing. A slow honest
// peer's word is still had once it answers.
// One height a member, the lowest: bounded by the pool.
type lateClaims struct {
	mu     sync.Mutex
	from   map[*pool.Member]int32
	silent map[*pool.Member]silentClaim
	asking map[*pool.Member]bool // a word asked, not in yet
	words  []lateWord            // the words in, not taken yet
	asks   sync.WaitGroup
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
// silences is kept until it answers, see answered). The claims of a peer
// whose word is being asked wait for it.
func (l *lateClaims) take(now time.Time) map[*pool.Member]int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out map[*pool.Member]int32
	for m, h := range l.from {
		if l.asking[m] {
			continue
		}
		if out == nil {
			out = map[*pool.Member]int32{}
		}
		out[m] = h
		delete(l.from, m)
	}
	for m, s := range l.silent {
		if now.Before(s.next) || l.asking[m] {
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

// turnTimer returns a timer that fires when the first silent claim
// waiting for its turn is due (see take), for the service to wake then
// and ask it (see Client.follow): nothing else may come to wake it
// before SyncInterval. It is nil, never firing, when no claim waits.
func (l *lateClaims) turnTimer() *turnTimer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for m, s := range l.silent {
		// A claim taken has no turn to wait for; one whose peer's word
		// is out waits for it, which wakes the service once in.
		if !s.next.IsZero() && !l.asking[m] && (first.IsZero() || s.next.Before(first)) {
			first = s.next
		}
	}
	if first.IsZero() {
		return nil
	}
	return &turnTimer{time.NewTimer(time.Until(first))}
}

// turnTimer is the timer of turnTimer; nil never fires.
type turnTimer struct{ t *time.Timer }

// c returns the timer's channel, nil (never ready) for a nil timer.
func (t *turnTimer) c() <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.t.C
}

// stop releases the timer.
func (t *turnTimer) stop() {
	if t != nil {
		t.t.Stop()
	}
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

// reachFor returns r, the reach of m in a verification, below the claim
// of m if m is silent on it (see lateClaims): the heights from there on
// are verified without it until it gives its word.
func (l *lateClaims) reachFor(m *pool.Member, r int32) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.silent[m]; ok && s.silences > 0 {
		return min(r, s.from-1)
	}
	return r
}

// ask asks w's peer for its word in the background, within lateWait of
// ctx, and calls wake once it is in (see takeWords).
func (l *lateClaims) ask(ctx context.Context, w lateWord, wake func()) {
	l.mu.Lock()
	if l.asking == nil {
		l.asking = map[*pool.Member]bool{}
	}
	l.asking[w.m] = true
	l.mu.Unlock()
	l.asks.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, lateWait)
		defer cancel()
		w.ask(ctx)
		l.mu.Lock()
		delete(l.asking, w.m)
		l.words = append(l.words, w)
		l.mu.Unlock()
		wake()
	})
}

// takeWords returns the words that came in since the last call.
func (l *lateClaims) takeWords() []lateWord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.words
	l.words = nil
	return out
}

// wait waits for the words asked to be in (their context ended, they
// are at once).
func (l *lateClaims) wait() { l.asks.Wait() }

// lateWord is a late claimer's word on the heights it claimed late, from
// from on: whether it states the verified filter header at its reach, or
// the error that kept it from answering.
type lateWord struct {
	m    *pool.Member
	conn askingConn // its connection when asked
	from int32
	// top is the height asked, its reach, and block the block there;
	// prev and want are the verified filter headers of top-1 and top
	// when it was asked.
	top        int32
	block      chainhash.Hash
	prev, want chainhash.Hash
	hashes     []chainhash.Hash // its answer
	agrees     bool
	err        error
}

// ask asks w's peer for its filter hash at w.top, from w.prev.
func (w *lateWord) ask(ctx context.Context) {
	w.hashes, w.err = cfHeadersOn(ctx, w.conn, w.m, w.top, w.block, w.prev, 1)
	w.agrees = w.err == nil && chainHeaders(w.prev, w.hashes) == w.want
}
