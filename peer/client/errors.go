package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// ConflictError is a disagreement between peers about a block's filter
// that the block cannot decide, where an answer needs one filter: the
// filter itself (GetCFilter), or a verification beyond maxConflicts such
// disagreements. The client cannot know which peer tells the truth, and
// says so instead of choosing. (A scan goes on past a Conflict.)
type ConflictError struct {
	Height    int32
	BlockHash chainhash.Hash
	// Sides lists, for each filter the peers served, the peers that
	// served it (the data directory is named as one side when its stored
	// filter headers are disputed).
	Sides [][]string
	// Why says why one filter was needed, if it was not for the filter
	// itself.
	Why string
}

func (e *ConflictError) Error() string {
	var sides []string
	for _, s := range e.Sides {
		sides = append(sides, strings.Join(s, ", "))
	}
	msg := fmt.Sprintf("client: peers disagree on the filter of block %v (height %d), which the block cannot decide: %s",
		e.BlockHash, e.Height, strings.Join(sides, " against "))
	if e.Why != "" {
		msg += ": " + e.Why
	}
	return msg
}

// addrs returns the addresses of ms.
func addrs(ms []*pool.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Addr()
	}
	return out
}

// peerErr names m as the peer that did what err says during op.
func peerErr(m *pool.Member, op string, err error) error {
	return &peer.PeerError{Peer: m.Addr(), Op: op, Err: err}
}

// ErrUnknownBlock: a block hash that is not in the client's chain.
var ErrUnknownBlock = errors.New("block not in the chain")

// OnePeerError: the filter header of a block that only one of the
// client's peers holds, which nothing could be compared with; asking again
// once another peer has the block gives a verified answer.
type OnePeerError struct {
	Height int32
	Peer   string
}

func (e *OnePeerError) Error() string {
	return fmt.Sprintf("client: the filter header of height %d rests on one peer, %s: no other peer holds the block yet", e.Height, e.Peer)
}

// ErrReorgTooDeep: a reorganization below the blocks a rescan remembers.
var ErrReorgTooDeep = errors.New("reorganization deeper than the rescan remembers")

// ErrRescanEnded: an update of a rescan whose Run has returned.
var ErrRescanEnded = errors.New("client: the rescan has ended")

// ErrNoPeers: no peer is left to ask; the error wraps what happened to
// each.
var ErrNoPeers = pool.ErrNoPeers

// noPeersError is the error of an operation that ran out of peers where
// one peer's failure says why: it reads as that peer's error, which
// names the peer, and is an ErrNoPeers, as the error of several is, so
// that what a caller does when no peer is left (go on with the heights
// those left hold, wait for one to come back) does not depend on how
// many failed.
type noPeersError struct{ err error }

func (e *noPeersError) Error() string { return e.err.Error() }

// Unwrap returns the peer's error and ErrNoPeers.
func (e *noPeersError) Unwrap() []error { return []error{e.err, ErrNoPeers} }

// isLie reports whether a request's error proves the peer sent false data.
func isLie(err error) bool {
	for _, e := range []error{peer.ErrBadFilter, peer.ErrBadFilterHeader, peer.ErrBadBlock, peer.ErrBadProof,
		peer.ErrBadHeaders, peer.ErrMissingTransactions, peer.ErrProtocol} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// UnservedError is a peer that announced blocks that it then did not
// serve (the chain lacks them after its header sync), more than an honest
// node does: its score of them reached maxUndelivered, and asked for them
// then, it did not serve enough of them (those it served are refunded,
// see unservedScores). It proves no lie: a peer that denied one (a
// notfound, a block failing its checks) is banned for it without proof
// (see pool.Pool.BanWithoutProof), one that could not be heard (slow, no
// witness blocks) is dropped; the error wrapping it says which.
type UnservedError struct {
	// Blocks is its score: how many blocks it announced and did not
	// serve, each counting half as much an hour later.
	Blocks int
}

func (e *UnservedError) Error() string {
	return fmt.Sprintf("announced %d blocks it then did not serve (lately; those it served when asked refunded)", e.Blocks)
}

// WithheldHeadersError is a peer whose header sync, after it announced
// blocks the chain lacked or connected again, gave no complete answer
// within the wait (announceLeadWait): it withholds its headers, or is too
// slow to wait for. It proves no lie: the peer is dropped, not banned,
// and dialled again after its backoff. It wraps peer.ErrStalled.
type WithheldHeadersError struct {
	// Announced holds the blocks it announced that the chain lacked
	// (none for a peer that connected again).
	Announced []chainhash.Hash
	// Waited is how long its sync was waited for.
	Waited time.Duration
	// Err is how its sync ended.
	Err error
}

func (e *WithheldHeadersError) Error() string {
	what := "after it connected again"
	switch n := len(e.Announced); n {
	case 0:
	case 1:
		what = fmt.Sprintf("after it announced block %s, which the chain lacks", e.Announced[0])
	default:
		what = fmt.Sprintf("after it announced %d blocks the chain lacks (the first %s)", n, e.Announced[0])
	}
	return fmt.Sprintf("%v: sent no complete headers within %v %s (%v)", peer.ErrStalled, e.Waited, what, e.Err)
}

// Unwrap returns peer.ErrStalled: withholding proves no lie.
func (e *WithheldHeadersError) Unwrap() error { return peer.ErrStalled }
