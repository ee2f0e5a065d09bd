package notify

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// historyJob is the history scan of one registration: the blocks from its
// height hint up to where the rescan watches its item.
type historyJob struct {
	ctx   context.Context // ended by the registration's end and by Stop
	r     *client.Rescan  // the rescan the item was added to
	idx   int             // the item's index in its watch list
	item  client.WatchItem
	hint  uint32
	to    int32                                           // the top of its range, set by its first scan (-1 before)
	found func(m client.Match, onePeer string, tip int32) // called with mu held
	// name is the registration's, since when the scan was queued and
	// err what it waits for or its last failure (guarded by the
	// notifier's mu), for Stalls.
	name  string
	since time.Time
	err   error
	// seen are the peers its kept scans rested on, and those it was
	// queued again for (see requeueUnsure), guarded by the notifier's
	// mu.
	seen []string
	// from, if above hint, is where its next scan starts (a revision of
	// the filter headers from there, see requeueRevised); revised is
	// the client's count of revisions when its last scan began
	// (client.Client.Revised), and began when. Guarded by the
	// notifier's mu.
	from    int32
	revised uint64
	began   time.Time
}

// watch adds item to the rescan's watch list and queues the scan of the
// history below what the rescan scans with it, from hint: each match on
// the chain is given to found. register is called with mu held, with the
// item's index in the watch list and the function that ends its history
// scan, before any event can reach the registration. watch returns at
// once: the history is scanned by a worker.
func (n *Notifier) watch(name string, item client.WatchItem, hint uint32, register func(idx int, stop context.CancelFunc),
	found func(m client.Match, onePeer string, tip int32)) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running {
		return ErrStopped
	}
	// Appended and queued under mu, so that the rescan's watch list and
	// n.items keep one order (a new rescan after a failure takes
	// n.items).
	idx := len(n.items)
	n.items = append(n.items, item)
	n.r.Update([]client.WatchItem{item}, -1)
	ctx, stop := context.WithCancel(n.ctx)
	register(idx, stop)
	n.queueLocked(&historyJob{ctx: ctx, r: n.r, idx: idx, item: item, hint: hint, to: -1, found: found, name: name, since: time.Now()})
	return nil
}

// queueLocked queues j's scan, starting a worker if fewer than
// maxHistoryWorkers run. Called with mu held.
func (n *Notifier) queueLocked(j *historyJob) {
	n.jobs = append(n.jobs, j)
	if n.workers < maxHistoryWorkers {
		n.workers++
		n.wg.Add(1)
		go n.historyWorker()
	}
}

// historyWorker scans the queued histories until none is left.
func (n *Notifier) historyWorker() {
	defer n.wg.Done()
	for {
		n.mu.Lock()
		if len(n.jobs) == 0 {
			n.workers--
			n.mu.Unlock()
			return
		}
		j := n.jobs[0]
		n.jobs[0] = nil
		n.jobs = n.jobs[1:]
		n.scanning[j], j.err = true, errHistoryAwaiting
		n.mu.Unlock()
		n.history(j)
		n.mu.Lock()
		delete(n.scanning, j)
		n.mu.Unlock()
	}
}

// history scans j's history once the rescan has its item: what the rescan
// scans from then on holds it, what is below is scanned here (a block
// found by both counts once). A failed scan is retried, with a bounded
// backoff, until it succeeds or the registration ends; so is, for up to
// onePeerPatience, one whose result rested on one peer while others
// that serve filters were set aside (dropped, unreachable). A result
// that rests on one peer still is kept (see unsureScan): the scan is
// queued again once another peer serving filters holds its blocks. A
// liar left alone, for a moment or from the start, does not hide a
// payment or a spend for good.
func (n *Notifier) history(j *historyJob) {
	if err := n.awaitApplied(j); err != nil {
		return // the registration or the notifier ended
	}
	if j.to < 0 {
		j.to = j.r.Height() - 1
	}
	if int32(j.hint) > j.to {
		return
	}
	n.mu.Lock()
	j.err = errHistoryScanning
	n.mu.Unlock()
	start := time.Now()
	for wait := minRetry; ; wait = min(2*wait, maxRetry) {
		n.mu.Lock()
		if !j.began.IsZero() {
			// Coalesced: the revisions since its last scan began,
			// the one that queued it again and any that came while
			// it waited, from the lowest height they gave up.
			if _, low := n.c.Revised(j.revised); low <= j.to && j.from > 0 {
				j.from = min(j.from, low)
			}
		}
		from := max(int32(j.hint), j.from)
		j.revised, _ = n.c.Revised(0)
		j.began = time.Now()
		n.mu.Unlock()
		res, err := n.c.ScanBIP157(j.ctx, client.ScanRequest{Watch: []client.WatchItem{j.item}, From: from, To: j.to})
		if err == nil {
			n.deliver(j, res)
			if n.revisedBelow(j) {
				// Scanned against filter headers given up meanwhile:
				// scanned again, once revisedGap has passed since
				// this scan began.
				if n.waitRevisedGap(j) != nil {
					return
				}
				continue
			}
			if !restedOnOneAmongMore(res) || time.Since(start) >= onePeerPatience {
				n.keepUnsure(j, res)
				return
			}
			err = errHistoryOnePeer
		}
		if j.ctx.Err() != nil {
			return
		}
		n.mu.Lock()
		j.err = err
		n.mu.Unlock()
		n.logf("notify: %s: the history from height %d: %v (again in %v)", j.name, j.hint, err, wait)
		select {
		case <-j.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// awaitApplied returns once j's rescan has its item: what it scans from
// then on holds it. The item was queued before: the next update the
// rescan applies holds it, and every item queued before the wait, so
// one wait serves the registrations made together. A rescan that ended
// without it is followed by one whose watch list holds it from where this
// one stopped.
func (n *Notifier) awaitApplied(j *historyJob) error {
	n.mu.Lock()
	if n.applied.r == j.r && j.idx < n.applied.items {
		n.mu.Unlock()
		return nil
	}
	queued := len(n.items)
	n.mu.Unlock()
	if err := j.r.UpdateWait(j.ctx, nil, -1); err != nil && !errors.Is(err, client.ErrRescanEnded) {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.applied.r != j.r || n.applied.items < queued {
		n.applied.r, n.applied.items = j.r, queued
	}
	return nil
}

// deliver gives the matches of a history scan on the chain to its
// registration, each naming the peer it rests on if only one.
func (n *Notifier) deliver(j *historyJob, res *client.ScanResult) {
	sole := soleUsable(res.Peers)
	n.mu.Lock()
	defer n.mu.Unlock()
	if j.ctx.Err() != nil {
		return
	}
	for _, m := range res.Matches {
		if m.FalsePositive || !n.view.holds(n.c, m.Height, m.BlockHash) {
			continue
		}
		one := sole
		for _, o := range res.OnePeer {
			if o.From <= m.Height && m.Height <= o.To {
				one = o.Peer
			}
		}
		j.found(m, one, n.view.tip())
	}
}

// onePeerPatience is how long a history scan whose result rested on one
// peer among several is scanned again for one that others cross-check.
const onePeerPatience = 2 * time.Minute

// restedOnOneAmongMore reports whether res, or a range of it, rested on
// one peer while other peers that serve filters, not banned, were set
// aside: they may be back for another scan.
func restedOnOneAmongMore(res *client.ScanResult) bool {
	if soleUsable(res.Peers) == "" && len(res.OnePeer) == 0 {
		return false
	}
	return slices.ContainsFunc(res.Peers, func(p client.PeerStatus) bool {
		return !p.Banned && p.Reason != "" && servesFilters(p)
	})
}

// soleUsable names the peer a result rests on when it is the only one
// in use (neither banned nor set aside) that serves compact filters: a
// peer that serves none spoke for no filter. Empty if there are several,
// or none.
func soleUsable(peers []client.PeerStatus) string {
	sole := ""
	for _, p := range peers {
		if !usable(p) {
			continue
		}
		if sole != "" {
			return ""
		}
		sole = p.Address
	}
	return sole
}

// servesFilters reports whether the peer advertised compact filters.
func servesFilters(p client.PeerStatus) bool {
	return slices.Contains(strings.Split(p.Services, "|"), wire.SFNodeCF.String())
}
