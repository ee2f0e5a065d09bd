package chain

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// span is a run of consecutive headers of a chain with their hashes, the
// first at height base. The difficulty and time rules read a header's
// ancestors from a span, so a chain that keeps only its last headers in
// memory checks new ones exactly as one that keeps them all.
type span struct {
	base    int32
	headers []wire.BlockHeader
	hashes  []chainhash.Hash
}

// tip returns the height of the span's last header.
func (s *span) tip() int32 { return s.base + int32(len(s.headers)) - 1 }

// at returns the header at height, which the span must hold.
func (s *span) at(height int32) *wire.BlockHeader { return &s.headers[height-s.base] }

// hashAt returns the hash of the header at height, which the span must
// hold.
func (s *span) hashAt(height int32) chainhash.Hash { return s.hashes[height-s.base] }

// holds reports whether the span holds the header at height.
func (s *span) holds(height int32) bool { return height >= s.base && height <= s.tip() }

// push appends a header with its hash above the tip.
func (s *span) push(h *wire.BlockHeader, hash chainhash.Hash) {
	s.headers = append(s.headers, *h)
	s.hashes = append(s.hashes, hash)
}

// cut keeps the headers up to height.
func (s *span) cut(height int32) {
	s.headers = s.headers[:height+1-s.base]
	s.hashes = s.hashes[:height+1-s.base]
}

// dropBelow drops the headers below height, reusing the arrays so that
// a span sliding up a chain never grows them.
func (s *span) dropBelow(height int32) {
	n := int(height - s.base)
	s.headers = s.headers[:copy(s.headers, s.headers[n:])]
	s.hashes = s.hashes[:copy(s.hashes, s.hashes[n:])]
	s.base = height
}
