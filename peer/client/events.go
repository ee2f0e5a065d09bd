package client

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// EventMatch: a transaction of the watch list, in a block about to
	// be reported connected (or, before EventRechecked, in one reported
	// already).
	EventMatch EventKind = iota
	// EventConnected: a block was scanned; blocks come in height order.
	EventConnected
	// EventDisconnected: a block reported connected left the chain (a
	// reorganization); what matched in it no longer holds. Disconnections
	// come from the highest block down, before the new blocks.
	EventDisconnected
	// EventTip: the rescan has reached the peers' tip.
	EventTip
	// EventRechecked: a block reported connected resting on one peer
	// (OnePeer) was scanned again once another peer held it, with their
	// words compared, or a block was scanned again because its filter
	// header was verified anew to another value (a peer's later word
	// proved the ones it was first verified with false); the EventMatch
	// events of its height just before it are the transactions the first
	// scan missed (a liar's filter may leave them out), and only those.
	// It stays connected. OnePeer names the peer it rests on still, if
	// any.
	EventRechecked
)

func (k EventKind) String() string {
	switch k {
	case EventMatch:
		return "match"
	case EventConnected:
		return "connected"
	case EventDisconnected:
		return "disconnected"
	case EventTip:
		return "tip"
	case EventRechecked:
		return "rechecked"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing a rescan reports, as it happens.
type Event struct {
	Kind      EventKind
	Height    int32
	BlockHash chainhash.Hash
	// Header is the block's header (for EventDisconnected, of the block
	// that left the chain).
	Header wire.BlockHeader
	// Match is the transaction found, for EventMatch.
	Match *Match
	// OnePeer, for EventConnected and EventRechecked, names the peer the
	// block's filter rests on when no other peer's chain reached it, or
	// when it was the only peer serving filters (no word was compared).
	OnePeer string
}

// maxReorgDepth is how many connected blocks a rescan remembers, and so
// the deepest reorganization it reports block by block.
const maxReorgDepth = 2016
