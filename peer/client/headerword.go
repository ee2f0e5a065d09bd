package client

import (
	"errors"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// headerWord is a peer's word on the filter header at one height, of
// the block there.
type headerWord struct {
	m      *pool.Member
	height int32
	block  chainhash.Hash
	header chainhash.Hash
	// left counts the verifications in a row the peer left before
	// stating the filter hashes leading to it (see keepLeftWords).
	left int
}

// prevHeaderError is a peer's filter header before the heights it was
// asked for that is not the verified one (see cfHeaders).
type prevHeaderError struct {
	word headerWord
	msg  string
}

func (e *prevHeaderError) Error() string { return e.msg }

// Unwrap makes the error a peer.ErrBadFilterHeader unless the header is
// disputed (see disputedPrev).
func (e *prevHeaderError) Unwrap() error { return peer.ErrBadFilterHeader }

// maxHeldWords bounds the words held from one verification to the next
// (see holdWords).
const maxHeldWords = 64

// heldWords are the words held for the next verification; the downloads
// of a scan hold theirs at once (see ownCheckpoint).
type heldWords struct {
	mu sync.Mutex
	ws []headerWord
}

// errDisputedHeader is the error of a peer whose filter leads to the
// filter header it states, which is not the agreed one: the header is
// verified again, and nobody is blamed for it yet.
var errDisputedHeader = errors.New("the peer states another filter header than the agreed one")
