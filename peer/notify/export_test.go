package notify

// WatchedItems returns the number of items in the watch list of n's
// rescan.
func WatchedItems(n *Notifier) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.items)
}

// RescanHeight returns the next height n's rescan scans.
func RescanHeight(n *Notifier) int32 {
	n.mu.Lock()
	r := n.r
	n.mu.Unlock()
	return r.Height()
}

// RevisedGap is revisedGap.
const RevisedGap = revisedGap
