package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

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
	// held are the blocks fetched by the operation's passes, so that a
	// pass after a failure asks only for the rest.
	held map[chainhash.Hash]*wire.MsgBlock
	// fetches are what the operation's block fetches asked of each peer
	// (planFetches), over its passes.
	fetches fetchLog
}

// hold keeps a block fetched for the operation's later passes.
func (l *scanLog) hold(hash chainhash.Hash, b *wire.MsgBlock) {
	if l.held == nil {
		l.held = map[chainhash.Hash]*wire.MsgBlock{}
	}
	l.held[hash] = b
}

// newScanLog starts the log of an operation.
func newScanLog() *scanLog { return &scanLog{budget: pool.NewBudget()} }

// startPass forgets what an earlier pass found of the peers.
func (l *scanLog) startPass() { l.oneVoice, l.compared = nil, nil }

// note adds a warning for the result.
func (l *scanLog) note(s string) { l.notes = append(l.notes, s) }
