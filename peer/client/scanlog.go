package client

import "github.com/spvfilter/spvfilter/peer/pool"

// scanLog is what one operation (a scan, a verification, a header sync)
// learns about its peers, for its result: it lives on the operation, not
// on the client.
type scanLog struct {
	// budget bounds how long the operation waits for slow peers.
	budget *pool.Budget
	// notes say what may make the result less than it looks.
	notes []string
	// Of the current pass (a scan starts again after a reorganization
	// or a failed peer): the heights only one peer could speak for, and
	// the peers whose answers were compared with another's.
	oneVoice []OnePeer
	compared map[*pool.Member]bool
}

// newScanLog starts the log of an operation.
func newScanLog() *scanLog { return &scanLog{budget: pool.NewBudget()} }

// startPass forgets what an earlier pass found of the peers.
func (l *scanLog) startPass() { l.oneVoice, l.compared = nil, nil }

// note adds a warning for the result.
func (l *scanLog) note(s string) { l.notes = append(l.notes, s) }
