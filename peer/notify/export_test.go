package notify

// WatchedItems returns the number of items in the watch list of n's
// rescan.
func WatchedItems(n *Notifier) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.items)
}
