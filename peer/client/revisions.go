package client

import (
	"math"
	"slices"
	"sync"
)

// revisionLog keeps, for the last maxRevisions times the client gave up
// filter headers verified (Client.revised), the lowest height given up,
// so that a rescan learns whether a revision reached below the blocks it
// remembers (see Rescan.forgotten).
type revisionLog struct {
	mu   sync.Mutex
	last []revision // oldest first
}

// revision is the n-th time filter headers were given up, from from on.
type revision struct {
	n    uint64
	from int32
}

// maxRevisions bounds revisionLog.
const maxRevisions = 64

// add records that the n-th revision gave up the heights from from on.
func (l *revisionLog) add(n uint64, from int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.last) == maxRevisions {
		l.last = slices.Delete(l.last, 0, 1)
	}
	l.last = append(l.last, revision{n, from})
}

// lowestSince returns the lowest height given up by the revisions after
// the seen-th up to now (math.MaxInt32 if none), and whether the log
// still holds them all.
func (l *revisionLog) lowestSince(seen, now uint64) (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	low, held := int32(math.MaxInt32), uint64(0)
	for _, r := range l.last {
		if r.n > seen && r.n <= now {
			low = min(low, r.from)
			held++
		}
	}
	return low, held == now-seen
}
