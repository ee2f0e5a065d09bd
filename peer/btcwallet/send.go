package btcwallet

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// SendRawTransaction sends tx to the peers (Client.SendTransaction) and
// returns its hash once a peer holds it. It is then sent again at each
// new block until a block holds it or another spend of one of its
// inputs, or a peer refuses it (for a reason other than holding it
// already). A transaction already in the
// chain is chain.ErrTxAlreadyConfirmed; when no peer took it, the error is
// a refusal's, mapped by MapRPCErr, or the failure of every peer wrapped
// in chain.ErrUndefined. allowHighFees is ignored: peers have no such
// check.
func (b *Backend) SendRawTransaction(tx *wire.MsgTx, _ bool) (*chainhash.Hash, error) {
	if err := b.running(); err != nil {
		return nil, err
	}
	ctx, cancel := b.callContext()
	defer cancel()
	txid := tx.TxHash()
	res, err := b.c.SendTransaction(ctx, tx)
	if err != nil {
		return nil, b.MapRPCErr(sendFailure(res, err))
	}
	if res.Mined != nil {
		return nil, fmt.Errorf("%w: transaction %v is in block %v at height %d",
			chain.ErrTxAlreadyConfirmed, txid, res.Mined.BlockHash, res.Mined.Height)
	}
	for _, w := range res.Warnings {
		b.logf("sending %v: %s", txid, w)
	}
	if old, dropped := b.unmined.keep(tx); dropped {
		b.logf("more than %d transactions unmined: %v is no longer sent again", maxUnmined, old)
	}
	return &txid, nil
}

// sendFailure returns the error that best says why no peer took a
// transaction: a peer's reject, "already in the mempool" or "already
// confirmed" first (they mean the network has it), then any other reject,
// else err.
func sendFailure(res *client.SendResult, err error) error {
	if res == nil {
		return err
	}
	addrs := make([]string, 0, len(res.Failed))
	for a := range res.Failed {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	var first error
	for _, a := range addrs {
		var rej *peer.RejectError
		if !errors.As(res.Failed[a], &rej) {
			continue
		}
		if rej.Kind.Held() {
			return fmt.Errorf("%w: %w", res.Failed[a], err)
		}
		if first == nil {
			first = fmt.Errorf("%w: %w", res.Failed[a], err)
		}
	}
	if first != nil {
		return first
	}
	return err
}

// MapRPCErr maps an error of the peers onto the errors btcwallet and its
// users recognise: a reject message by its kind (already in the mempool,
// already confirmed), then by the node's reason, matched as btcwallet
// matches btcd's RPC errors (chain.BtcdErrMap, chain.BtcdErrMapPre2402,
// and the wording of btcwallet's own errors, as older Bitcoin Core sent
// in reject messages), the longest match winning; anything else wraps
// chain.ErrUndefined. The result wraps err too.
func (b *Backend) MapRPCErr(err error) error {
	if err == nil {
		return nil
	}
	var rej *peer.RejectError
	if errors.As(err, &rej) {
		switch rej.Kind {
		case peer.RejectAlreadyInMempool:
			return fmt.Errorf("%w: %w", chain.ErrTxAlreadyInMempool, err)
		case peer.RejectAlreadyConfirmed:
			return fmt.Errorf("%w: %w", chain.ErrTxAlreadyConfirmed, err)
		}
		if m := matchReason(rej.Reason); m != nil {
			return fmt.Errorf("%w: %w", m, err)
		}
		if rej.Kind == peer.RejectInsufficientFee {
			return fmt.Errorf("%w: %w", chain.ErrInsufficientFee, err)
		}
	}
	if m := matchReason(err.Error()); m != nil {
		return fmt.Errorf("%w: %w", m, err)
	}
	return fmt.Errorf("%w: %w", chain.ErrUndefined, err)
}

// ownReasons are btcwallet's errors whose wording is a reason a node
// may give (Bitcoin Core's reject reasons, dashes read as spaces).
var ownReasons = []chain.RPCErr{
	chain.ErrTxAlreadyInMempool, chain.ErrTxAlreadyKnown, chain.ErrTxAlreadyConfirmed,
	chain.ErrMempoolConflict, chain.ErrMissingInputsOrSpent, chain.ErrInsufficientFee,
	chain.ErrMempoolMinFeeNotMet, chain.ErrConflictingTx, chain.ErrDuplicateInput,
}

// matchReason returns the error whose wording is the longest found in s,
// ignoring case and reading dashes as spaces, or nil.
func matchReason(s string) error {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", " ")) }
	s = norm(s)
	var best error
	bestLen := 0
	try := func(key string, e error) {
		if k := norm(key); len(k) > bestLen && strings.Contains(s, k) {
			best, bestLen = e, len(k)
		}
	}
	for _, m := range []map[string]error{chain.BtcdErrMap, chain.BtcdErrMapPre2402} {
		for k, e := range m {
			try(k, e)
		}
	}
	for _, e := range ownReasons {
		try(e.Error(), e)
	}
	return best
}

// TestMempoolAccept returns chain.ErrUnimplemented, as btcwallet's
// neutrino backend does: the peer-to-peer protocol has no such query, and
// callers (lnd) skip the check on this error.
func (b *Backend) TestMempoolAccept([]*wire.MsgTx, float64) ([]*btcjson.TestMempoolAcceptResult, error) {
	return nil, chain.ErrUnimplemented
}
