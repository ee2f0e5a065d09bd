package notify

import (
	"slices"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// unsureScan is a history scan whose last result rested on one peer: the
// only peer in use serving filters, or the one whose chain alone held a
// range. A liar alone leaves out of its filters what it hides, consistent
// with its own filter headers; nothing proves it false until another
// peer serving filters holds the same blocks. The scan is then queued
// again: the client compares the two peers' filter headers, bans the one
// a block proves false, and the scan finds what the liar hid. low is the
// lowest height that rested on one peer.
type unsureScan struct{ low int32 }

// maxSeen bounds historyJob.seen: the oldest is forgotten first.
const maxSeen = 64

// keepUnsure keeps j for another scan if res, its result, rested on one
// peer, with a log line naming it; the peers it rested on join j.seen.
// Otherwise j is kept as scanned (see requeueRevised).
func (n *Notifier) keepUnsure(j *historyJob, res *client.ScanResult) {
	ranges := res.OnePeer
	if sole := soleUsable(res.Peers); sole != "" {
		ranges = []client.OnePeer{{From: int32(j.hint), To: j.to, Peer: sole}}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	j.from = 0
	if len(ranges) == 0 {
		if j.ctx.Err() == nil {
			n.scanned[j] = true
		}
		return
	}
	u := unsureScan{low: ranges[0].From}
	for _, o := range ranges {
		u.low = min(u.low, o.From)
		j.saw(o.Peer)
	}
	if j.ctx.Err() != nil {
		return
	}
	n.unsure[j] = u
	n.logf("notify: %s: the history from height %d rested on one peer from height %d (%v): scanned again once another peer serving filters holds it",
		j.name, j.hint, u.low, ranges[0].Peer)
}

// requeueUnsure queues again the history scans kept resting on one peer
// that a peer serving filters, in use, now holds, if it is not one of
// those they rested on or were queued again for before (historyJob.seen:
// a peer that holds the blocks but whose word leaves them resting on one
// peer brings one scan, not one every check); peers is the client's
// Peers. It forgets those of registrations over.
func (n *Notifier) requeueUnsure(peers []client.PeerStatus) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for j, u := range n.unsure {
		if j.ctx.Err() != nil {
			delete(n.unsure, j)
			continue
		}
		again := false
		for _, p := range peers {
			if usable(p) && p.Tip >= u.low && !slices.Contains(j.seen, p.Address) {
				j.saw(p.Address)
				again = true
			}
		}
		if again {
			delete(n.unsure, j)
			j.since = time.Now()
			n.queueLocked(j)
		}
	}
}

// saw adds addr to j.seen. Called with the notifier's mu held.
func (j *historyJob) saw(addr string) {
	if slices.Contains(j.seen, addr) {
		return
	}
	if len(j.seen) == maxSeen {
		j.seen = slices.Delete(j.seen, 0, 1)
	}
	j.seen = append(j.seen, addr)
}

// usable reports whether p is in use (neither banned nor set aside) and
// serves compact filters.
func usable(p client.PeerStatus) bool {
	return !p.Banned && p.Reason == "" && servesFilters(p)
}

// revisedGap is how long a history scan waits, from the start of its
// last scan, before it is scanned again for a revision of the filter
// headers it covered (see requeueRevised): the revisions that came
// meanwhile are coalesced into that one scan, from the lowest height they
// gave up, so that peers who have the client revise its filter headers
// again and again have each history scanned once every revisedGap at
// most, however many revisions they bring.
const revisedGap = 5 * time.Second

// waitRevisedGap waits until revisedGap has passed since j's last scan
// began, or j's registration ends (its error then).
func (n *Notifier) waitRevisedGap(j *historyJob) error {
	n.mu.Lock()
	wait := time.Until(j.began.Add(revisedGap))
	n.mu.Unlock()
	select {
	case <-j.ctx.Done():
		return j.ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// revisedBelow reports whether the client gave up, since j's last scan
// began, filter headers of heights that scan covered: its filters may
// have hidden what it looked for. j is then set to be scanned again from
// the lowest of them.
func (n *Notifier) revisedBelow(j *historyJob) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, from := n.c.Revised(j.revised)
	if from > j.to {
		return false
	}
	j.from = max(int32(j.hint), from)
	n.logf("notify: %s: the filter headers from height %d were verified anew (a peer's late word differed) after its history was scanned: scanned again from %d",
		j.name, from, j.from)
	return true
}

// requeueRevised queues again the history scans done (scanned, or kept
// resting on one peer) whose range holds heights whose filter headers
// the client has given up since the scan began, and verified anew: a
// peer's late word differed from those the scan rested on, so their
// filters may have hidden what it looked for (a liar's, which the
// verification anew proves false). Each is scanned again from the lowest
// height given up, once revisedGap has passed since its last scan began:
// the revisions until then are coalesced into that scan, and one queued
// is not queued again (it is no longer done). Each job is compared with
// the revisions since its own last scan, every time: one done just
// after a revision is not passed over. It forgets those of registrations
// over.
func (n *Notifier) requeueRevised() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for j := range n.scanned {
		if j.ctx.Err() != nil {
			delete(n.scanned, j)
		}
	}
	now := time.Now()
	for _, done := range []map[*historyJob]bool{n.scanned, unsureJobs(n.unsure)} {
		for j := range done {
			if j.ctx.Err() != nil || now.Sub(j.began) < revisedGap {
				continue
			}
			_, from := n.c.Revised(j.revised)
			if from > j.to {
				continue
			}
			delete(n.scanned, j)
			delete(n.unsure, j)
			j.from, j.since = max(int32(j.hint), from), now
			n.logf("notify: %s: the filter headers from height %d were verified anew (a peer's late word differed): its history is scanned again from %d",
				j.name, from, j.from)
			n.queueLocked(j)
		}
	}
}

// unsureJobs returns the jobs of unsure.
func unsureJobs(unsure map[*historyJob]unsureScan) map[*historyJob]bool {
	out := make(map[*historyJob]bool, len(unsure))
	for j := range unsure {
		out[j] = true
	}
	return out
}
