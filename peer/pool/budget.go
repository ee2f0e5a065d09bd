package pool

import (
	"fmt"
	"sync"
	"time"
)

// Budget bounds how long one operation (a scan, a verification, a
// connect) waits for members slower than the fastest. Each round of
// requests to several members at once (Each) goes on once the first
// answer has come; a member that answers later makes the round wait the
// difference, its lag. A member's lags add up over the operation, within
// a budget relative to the operation's own time (what it took but for the
// waiting for slow members, the fastest member's answers and the
// caller's work): twice that (budgetFactor), or the hold if more (a
// quarter of the timeout, see Each). A member whose lag would pass its
// budget is cut off there: its request is cancelled and it sits out a
// while (a redial backoff, doubling while it stays slow: see
// Member.sitOut), with a warning naming it, its answer time and its
// sit-out; back within the operation, its lag still counts. So a
// member slow on every answer is compared while it stays within its
// budget, and costs an operation twice its own time at most (the hold
// for a short one); being slow buys no trust. A member with a slower link
// than another (a remote node beside a local one) loses less to the
// others' speed in a long operation than in a short one.
type Budget struct {
	mu     sync.Mutex
	start  time.Time
	waited time.Duration // what the rounds waited after their first answer
	fast   time.Duration // the rounds' first answers' times, added up
	rounds int
	lag    map[*Member]time.Duration
	// took and answers add up each member's answer times, for its mean.
	took    map[*Member]time.Duration
	answers map[*Member]int
}

// budgetFactor is how many times the operation's own time a member's
// lags over it may add up to (see Budget).
const budgetFactor = 2

// NewBudget starts the accounting of an operation.
func NewBudget() *Budget { return &Budget{start: time.Now()} }

// budget returns the budget now, floor at least. Called with mu held.
func (b *Budget) budget(floor time.Duration) time.Duration {
	return max(floor, budgetFactor*(time.Since(b.start)-b.waited))
}

// left returns how much longer than the fastest member m may still make
// the operation wait, in all, within a budget of floor at least.
func (b *Budget) left(m *Member, floor time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.budget(floor) - b.lag[m]
}

// addRound records a round whose first answer took first, and which then
// waited for the others for waited.
func (b *Budget) addRound(first, waited time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fast += first
	b.waited += waited
	b.rounds++
}

// answered records that m answered a round after took, lag of it beyond
// the round's first answer (a cut answer too, after the time waited).
func (b *Budget) answered(m *Member, took, lag time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lag == nil {
		b.lag, b.took, b.answers = map[*Member]time.Duration{}, map[*Member]time.Duration{}, map[*Member]int{}
	}
	b.lag[m] += lag
	b.took[m] += took
	b.answers[m]++
}

// describe says how slow m was against the fastest member, and what cut
// it off: the round's grace, at bound from its start if not zero, or its
// budget (of hold at least).
func (b *Budget) describe(m *Member, bound, hold time.Duration) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	mean, fast := time.Duration(0), time.Duration(0)
	if b.answers[m] > 0 {
		mean = b.took[m] / time.Duration(b.answers[m])
	}
	if b.rounds > 0 {
		fast = b.fast / time.Duration(b.rounds)
	}
	took := fmt.Sprintf("its answers took %v on average (the last cut short) against %v for the fastest peer's", mean.Round(time.Millisecond), fast.Round(time.Millisecond))
	if bound > 0 {
		return fmt.Sprintf("%s, and its last was not there %v after it was asked, the most one answer is waited for", took, bound.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s, and kept the scan waiting %v, its budget (%d times the scan's own time, %v at least)",
		took, b.lag[m].Round(time.Millisecond), budgetFactor, hold)
}
