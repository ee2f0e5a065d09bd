package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// cfHeadersOn is cfHeaders over conn, m's connection, for the want filter
// hashes from start up to the block stop.
func cfHeadersOn(ctx context.Context, conn askingConn, m *pool.Member, start int32, stop, prev chainhash.Hash, want int) ([]chainhash.Hash, error) {
	if conn.Peer == nil {
		return nil, peerErr(m, "getcfheaders", errors.New("not connected"))
	}
	gotPrev, hashes, err := conn.GetCFHeaders(ctx, start, stop, want)
	if err != nil {
		return nil, err
	}
	if gotPrev != prev {
		return nil, peerErr(m, "getcfheaders", &prevHeaderError{word: headerWord{m: m, height: start - 1, block: conn.chain.Hash(start - 1), header: gotPrev},
			msg: fmt.Sprintf("%v: previous filter header %v at height %d, the agreed one is %v", peer.ErrBadFilterHeader, gotPrev, start-1, prev)})
	}
	return hashes, nil
}

// offCheckpoint returns the error of m whose filter hashes start..end,
// from prev, do not lead to the checkpoint cp it sent itself; nil if they
// do.
func offCheckpoint(m *pool.Member, start, end int32, prev chainhash.Hash, hashes []chainhash.Hash, cp chainhash.Hash) error {
	if chainHeaders(prev, hashes) == cp {
		return nil
	}
	return peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
		peer.ErrBadFilterHeader, start, end))
}
