package client

import (
	"fmt"
	"sync"
	"time"
)

// slowBudget bounds how long a scan (or one verification of the service,
// or Connect) waits for peers slower than the fastest. Each round of
// requests to several peers at once (eachPeer) goes on once the first
// answer has come; a peer that answers later makes the round wait the
// difference, its lag. A peer's lags add up over the scan, within a budget
// relative to the scan's own time (what it took but for the waiting for
// slow peers, the fastest peer's answers and the client's work):
// budgetFactor times that, or budgetFloor if more. A peer whose lag would
// pass its budget is cut off there: its request is cancelled and it is
// left out of the scan (dropSlow), with a warning naming it and its answer
// time. So a peer slow on every answer is compared while it stays within
// its budget, and costs a scan budgetFactor times its own time at most
// (budgetFloor for a short one); being slow buys no trust. A peer with a
// slower link than another (a remote node beside a local one) loses less
// to the others' speed in a long scan than in a short one.
type slowBudget struct {
	mu     sync.Mutex
	start  time.Time
	waited time.Duration // what the rounds waited after their first answer
	fast   time.Duration // the rounds' first answers' times, added up
	rounds int
	lag    map[*member]time.Duration
	// took and answers add up each peer's answer times, for its mean.
	took    map[*member]time.Duration
	answers map[*member]int
}

// The budget of a peer's lags over a scan: budgetFactor times the scan's
// own time, at least budgetFloor (which spares a peer a short stall while
// the scan has only begun).
const (
	budgetFactor = 2
	budgetFloor  = time.Second
)

// reset starts the accounting of a new scan.
func (b *slowBudget) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.start, b.waited, b.fast, b.rounds = time.Now(), 0, 0, 0
	b.lag, b.took, b.answers = nil, nil, nil
}

// budget returns the budget now. Called with mu held.
func (b *slowBudget) budget() time.Duration {
	return max(budgetFloor, budgetFactor*(time.Since(b.start)-b.waited))
}

// left returns how much longer than the fastest peer m may still make the
// scan wait, in all.
func (b *slowBudget) left(m *member) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.budget() - b.lag[m]
}

// round records a round whose first answer took first, and which then
// waited for the others for waited.
func (b *slowBudget) round(first, waited time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fast += first
	b.waited += waited
	b.rounds++
}

// answered records that m answered a round after took, lag of it beyond
// the round's first answer (a cut answer too, after the time waited).
func (b *slowBudget) answered(m *member, took, lag time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lag == nil {
		b.lag, b.took, b.answers = map[*member]time.Duration{}, map[*member]time.Duration{}, map[*member]int{}
	}
	b.lag[m] += lag
	b.took[m] += took
	b.answers[m]++
}

// describe says how slow m was against the fastest peer.
func (b *slowBudget) describe(m *member) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	mean, fast := time.Duration(0), time.Duration(0)
	if b.answers[m] > 0 {
		mean = b.took[m] / time.Duration(b.answers[m])
	}
	if b.rounds > 0 {
		fast = b.fast / time.Duration(b.rounds)
	}
	return fmt.Sprintf("its answers took %v on average (the last cut short) against %v for the fastest peer's, and kept the scan waiting %v, its budget (%d times the scan's own time, %v at least)",
		mean.Round(time.Millisecond), fast.Round(time.Millisecond), b.lag[m].Round(time.Millisecond), budgetFactor, budgetFloor)
}
