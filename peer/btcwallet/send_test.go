package btcwallet

import (
	"errors"
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// TestMapRPCErr maps rejects, as btcd v0.24.2 and older Bitcoin Core word
// them, and other errors onto btcwallet's errors; the result keeps the
// original error.
func TestMapRPCErr(t *testing.T) {
	reject := func(kind peer.RejectKind, code wire.RejectCode, reason string) error {
		return &peer.PeerError{Peer: "127.0.0.1:1", Op: "tx", Err: &peer.RejectError{
			Peer: "127.0.0.1:1", Command: "tx", Code: code, Reason: reason, Kind: kind,
		}}
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"btcd mempool", reject(peer.RejectAlreadyInMempool, wire.RejectDuplicate, "already have transaction in mempool abc"), chain.ErrTxAlreadyInMempool},
		{"btcd chain", reject(peer.RejectAlreadyConfirmed, wire.RejectDuplicate, "transaction already exists in blockchain"), chain.ErrTxAlreadyConfirmed},
		{"btcd double spend", reject(peer.RejectInvalid, wire.RejectDuplicate, "output already spent in mempool"), chain.ErrMempoolConflict},
		{"btcd low fee", reject(peer.RejectInsufficientFee, wire.RejectInsufficientFee, "transaction abc has 100 fees which is under the required amount of 200"), chain.ErrMempoolMinFeeNotMet},
		{"btcd dust", reject(peer.RejectNonStandard, wire.RejectNonstandard, "transaction output 0: payment is dust"), chain.ErrDust},
		{"btcd orphan", reject(peer.RejectInvalid, wire.RejectDuplicate, "orphan transaction abc references outputs of unknown or fully-spent transaction def"), chain.ErrMissingInputs},
		{"older btcd mempool", reject(peer.RejectAlreadyInMempool, wire.RejectDuplicate, "already have transaction abc"), chain.ErrTxAlreadyInMempool},
		{"core mempool", reject(peer.RejectAlreadyInMempool, wire.RejectDuplicate, "txn-already-in-mempool"), chain.ErrTxAlreadyInMempool},
		{"core conflict", reject(peer.RejectInvalid, wire.RejectDuplicate, "txn-mempool-conflict"), chain.ErrMempoolConflict},
		{"core missing inputs", reject(peer.RejectOther, wire.RejectInvalid, "bad-txns-inputs-missingorspent"), chain.ErrMissingInputsOrSpent},
		{"core replacement fee", reject(peer.RejectInsufficientFee, wire.RejectInsufficientFee, "insufficient fee"), chain.ErrInsufficientFee},
		{"unknown fee reason", reject(peer.RejectInsufficientFee, wire.RejectInsufficientFee, "too cheap"), chain.ErrInsufficientFee},
		{"unknown reject", reject(peer.RejectInvalid, wire.RejectInvalid, "bad-witness-nonstandard"), chain.ErrUndefined},
		{"btcd RPC text", errors.New("-26: TX rejected: transaction already exists in blockchain"), chain.ErrTxAlreadyConfirmed},
		{"no peers", fmt.Errorf("client: send: %w", client.ErrNoPeers), chain.ErrUndefined},
	}
	b := &Backend{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := b.MapRPCErr(tc.err)
			if !errors.Is(got, tc.want) {
				t.Errorf("MapRPCErr(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("MapRPCErr(%v) = %v, which does not wrap the error", tc.err, got)
			}
			for _, other := range []error{chain.ErrTxAlreadyInMempool, chain.ErrTxAlreadyConfirmed, chain.ErrUndefined} {
				if other != tc.want && errors.Is(got, other) {
					t.Errorf("MapRPCErr(%v) = %v, which is also %v", tc.err, got, other)
				}
			}
		})
	}
	if err := b.MapRPCErr(nil); err != nil {
		t.Errorf("MapRPCErr(nil) = %v", err)
	}
}

// TestSendFailure picks, among the peers' failures, the reject that says
// the network has the transaction, else the first reject by address.
func TestSendFailure(t *testing.T) {
	rej := func(kind peer.RejectKind, reason string) error {
		return &peer.RejectError{Reason: reason, Kind: kind}
	}
	all := errors.New("no peer took the transaction")
	tests := []struct {
		name   string
		failed map[string]error
		want   error
	}{
		{"no reject", map[string]error{"a": peer.ErrStalled}, chain.ErrUndefined},
		{"mempool over invalid", map[string]error{"a": rej(peer.RejectInvalid, "output already spent in mempool"), "b": rej(peer.RejectAlreadyInMempool, "already have transaction in mempool")}, chain.ErrTxAlreadyInMempool},
		{"confirmed over stall", map[string]error{"a": peer.ErrStalled, "b": rej(peer.RejectAlreadyConfirmed, "transaction already exists in blockchain")}, chain.ErrTxAlreadyConfirmed},
		{"first reject", map[string]error{"b": rej(peer.RejectNonStandard, "payment is dust"), "a": rej(peer.RejectInvalid, "output already spent in mempool")}, chain.ErrMempoolConflict},
	}
	b := &Backend{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := b.MapRPCErr(sendFailure(&client.SendResult{Failed: tc.failed}, all))
			if !errors.Is(got, tc.want) || !errors.Is(got, all) {
				t.Errorf("got %v, want %v wrapping %v", got, tc.want, all)
			}
		})
	}
}
