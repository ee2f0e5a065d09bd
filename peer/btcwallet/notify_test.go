package btcwallet

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcwallet/chain"
)

// The kinds of chain notification btcwallet's handleChainNotifications
// acts on (chain/interface.go of btcwallet v0.16.10).
const (
	kindClientConnected        = "ClientConnected"
	kindBlockConnected         = "BlockConnected"
	kindBlockDisconnected      = "BlockDisconnected"
	kindFilteredBlockConnected = "FilteredBlockConnected"
	kindRelevantTx             = "RelevantTx"
	kindRescanProgress         = "RescanProgress"
	kindRescanFinished         = "RescanFinished"
)

// allKinds lists every kind, in the order of the chain package.
var allKinds = []string{
	kindClientConnected, kindBlockConnected, kindBlockDisconnected, kindFilteredBlockConnected,
	kindRelevantTx, kindRescanProgress, kindRescanFinished,
}

// notification is one chain notification as the wallet received it.
type notification struct {
	kind string
	// height is the block's height; 0 for ClientConnected and for an
	// unmined RelevantTx.
	height int32
	// txs is the number of relevant transactions a FilteredBlockConnected
	// carries.
	txs int
}

func (n notification) String() string {
	switch n.kind {
	case kindClientConnected:
		return n.kind
	case kindFilteredBlockConnected:
		return fmt.Sprintf("%s@%d(%d tx)", n.kind, n.height, n.txs)
	}
	return fmt.Sprintf("%s@%d", n.kind, n.height)
}

// describe returns the notification n stands for.
func describe(n interface{}) notification {
	switch n := n.(type) {
	case chain.ClientConnected:
		return notification{kind: kindClientConnected}
	case chain.BlockConnected:
		return notification{kind: kindBlockConnected, height: n.Height}
	case chain.BlockDisconnected:
		return notification{kind: kindBlockDisconnected, height: n.Height}
	case chain.FilteredBlockConnected:
		return notification{kind: kindFilteredBlockConnected, height: n.Block.Height, txs: len(n.RelevantTxs)}
	case chain.RelevantTx:
		out := notification{kind: kindRelevantTx, txs: 1}
		if n.Block != nil {
			out.height = n.Block.Height
		}
		return out
	case *chain.RescanProgress:
		return notification{kind: kindRescanProgress, height: n.Height}
	case *chain.RescanFinished:
		return notification{kind: kindRescanFinished, height: n.Height}
	}
	return notification{kind: fmt.Sprintf("unexpected %T", n)}
}

// notificationLog records the notifications of every wallet life of a
// run, by phase of the run. It is safe for concurrent use.
type notificationLog struct {
	mu      sync.Mutex
	phase   string
	phases  []string
	started []time.Time // when each phase started
	byPhase map[string][]notification
}

func newNotificationLog() *notificationLog {
	return &notificationLog{byPhase: make(map[string][]notification)}
}

// setPhase files the notifications that follow under phase.
func (l *notificationLog) setPhase(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = phase
	l.phases = append(l.phases, phase)
	l.started = append(l.started, time.Now())
}

func (l *notificationLog) add(n interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPhase[l.phase] = append(l.byPhase[l.phase], describe(n))
}

// of returns the notifications received during phase.
func (l *notificationLog) of(phase string) []notification {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]notification(nil), l.byPhase[phase]...)
}

// counts returns how many notifications of each kind were received.
func (l *notificationLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int)
	for _, ns := range l.byPhase {
		for _, n := range ns {
			out[n.kind]++
		}
	}
	return out
}

// String lists the notifications phase by phase, with the time from the
// start of each phase to the start of the next, runs of block connections
// without relevant transactions shortened to their range.
func (l *notificationLog) String() string {
	l.mu.Lock()
	phases := append([]string(nil), l.phases...)
	started := append([]time.Time(nil), l.started...)
	l.mu.Unlock()
	var b strings.Builder
	for i, p := range phases {
		took := "running"
		if i+1 < len(started) {
			took = started[i+1].Sub(started[i]).Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "%s (%s): %s\n", p, took, summarize(l.of(p)))
	}
	return b.String()
}

// summarize joins ns, writing each run of FilteredBlockConnected (no
// relevant transaction) and BlockConnected pairs at consecutive heights
// as one range.
func summarize(ns []notification) string {
	var out []string
	for i := 0; i < len(ns); {
		if j := emptyPairRun(ns, i); j > i {
			out = append(out, fmt.Sprintf("[Filtered+]BlockConnected %d..%d", ns[i].height, ns[j-1].height))
			i = j
			continue
		}
		out = append(out, ns[i].String())
		i++
	}
	return strings.Join(out, ", ")
}

// emptyPairRun returns the end of the run of empty block pairs starting
// at ns[i]; i if there is none.
func emptyPairRun(ns []notification, i int) int {
	j := i
	for j+1 < len(ns) {
		f, c := ns[j], ns[j+1]
		if f.kind != kindFilteredBlockConnected || f.txs != 0 || c.kind != kindBlockConnected ||
			c.height != f.height || (j > i && f.height != ns[j-1].height+1) {
			break
		}
		j += 2
	}
	return j
}

// anyHeight, as the height of a wanted notification, matches any height.
const anyHeight = -1

// matches reports whether n is the wanted notification w.
func (n notification) matches(w notification) bool {
	return n.kind == w.kind && n.txs == w.txs && (w.height == anyHeight || n.height == w.height)
}

// missing returns the first of want that ns does not hold in want's
// order (other notifications may come between), or ok.
func missing(ns []notification, want []notification) (notification, bool) {
	i := 0
	for _, w := range want {
		for i < len(ns) && !ns[i].matches(w) {
			i++
		}
		if i == len(ns) {
			return w, false
		}
		i++
	}
	return notification{}, true
}

// recordingBackend is a chain backend whose notifications pass through
// a log on their way to the wallet. Notifications returns the same
// channel on every call, as handleChainNotifications calls it on every
// turn of its loop.
type recordingBackend struct {
	chain.Interface
	log  *notificationLog
	out  chan interface{}
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func newRecordingBackend(b chain.Interface, log *notificationLog) *recordingBackend {
	return &recordingBackend{Interface: b, log: log, out: make(chan interface{}), quit: make(chan struct{})}
}

// Start starts the backend and then the relay of its notifications,
// whose channel a backend may create only when it starts.
func (r *recordingBackend) Start() error {
	if err := r.Interface.Start(); err != nil {
		return err
	}
	r.wg.Add(1)
	go r.relay(r.Interface.Notifications())
	return nil
}

func (r *recordingBackend) relay(in <-chan interface{}) {
	defer r.wg.Done()
	defer close(r.out)
	for {
		select {
		case n, ok := <-in:
			if !ok {
				return
			}
			r.log.add(n)
			select {
			case r.out <- n:
			case <-r.quit:
				return
			}
		case <-r.quit:
			return
		}
	}
}

// Notifications returns the relayed notifications.
func (r *recordingBackend) Notifications() <-chan interface{} { return r.out }

// Stop stops the backend and the relay.
func (r *recordingBackend) Stop() {
	r.Interface.Stop()
	r.once.Do(func() { close(r.quit) })
}

// WaitForShutdown waits for the backend and the relay to end.
func (r *recordingBackend) WaitForShutdown() {
	r.Interface.WaitForShutdown()
	r.wg.Wait()
}

// wanted returns, by phase of the flow, sequences of notifications the
// wallet must have received in that order (others may come between):
// what btcwallet's neutrino backend delivers, and what the wallet acts on.
// ClientConnected starts the wallet's sync; RescanFinished marks it
// synced (until then it ignores BlockDisconnected); a
// FilteredBlockConnected carries a block's relevant transactions, the
// BlockConnected after it moves the wallet's tip. A restore finds its
// transactions through FilterBlocks, not through notifications.
func (r *flowResult) wanted() map[string][][]notification {
	filtered := func(h int32, txs int) notification {
		return notification{kind: kindFilteredBlockConnected, height: h, txs: txs}
	}
	connected := func(h int32) notification { return notification{kind: kindBlockConnected, height: h} }
	finished := func(h int32) notification { return notification{kind: kindRescanFinished, height: h} }
	client := notification{kind: kindClientConnected}
	progress := notification{kind: kindRescanProgress, height: anyHeight}
	return map[string][][]notification{
		"connect": {
			{client, filtered(r.start, 0), finished(r.start)},
			{client, progress},
			{filtered(r.start, 0), connected(r.start)},
		},
		"receive": {{filtered(r.receive, 1), connected(r.receive)}},
		"spend":   {{filtered(r.spend, 1), connected(r.spend)}},
		"reorg": {{
			{kind: kindBlockDisconnected, height: r.spend},
			filtered(r.spend, 1), connected(r.spend), filtered(r.reorgTip, 0), connected(r.reorgTip),
		}},
		"reopen": {
			{client, filtered(r.reopenTip, 0), finished(r.reopenTip)},
			{client, progress},
			{filtered(r.reopenTip, 0), connected(r.reopenTip)},
		},
		"restore": {{client, finished(r.reopenTip)}},
	}
}

// checkNotifications checks the run's notifications: the wanted
// sequences of every phase, and the kinds: each of emits at least once,
// no other.
func checkNotifications(t *testing.T, bc backendCase, res *flowResult) {
	t.Helper()
	for phase, seqs := range res.wanted() {
		got := res.log.of(phase)
		for _, seq := range seqs {
			if n, ok := missing(got, seq); !ok {
				t.Errorf("%s, %s: no %v in order %v; got %s", bc.name, phase, n, seq, summarize(got))
			}
		}
	}
	counts := res.log.counts()
	t.Logf("%s: notifications by kind: %v", bc.name, counts)
	for _, k := range allKinds {
		if want := slices.Contains(bc.emits, k); want != (counts[k] > 0) {
			t.Errorf("%s: %d %s notifications, want some: %v", bc.name, counts[k], k, want)
		}
	}
}
