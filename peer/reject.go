package peer

import (
	"fmt"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// RejectKind is what a reject message means for a transaction, from its
// code and reason. btcd v0.24.2 (mempool.ErrToRejectErr) sends:
//
//   - REJECT_DUPLICATE for three different things, told apart by the
//     reason: "already have transaction in mempool" (already in
//     mempool), "transaction already exists in blockchain" (already
//     confirmed) and "output already spent in mempool" (a double spend
//     of a mempool transaction that does not signal replacement:
//     invalid); also "orphan transaction ... references outputs of
//     unknown or fully-spent transaction" (invalid), though not to
//     peers, whose orphans it keeps;
//   - REJECT_INSUFFICIENTFEE for a fee below the relay fee or a
//     replacement paying too little;
//   - REJECT_NONSTANDARD and REJECT_DUST for policy;
//   - REJECT_INVALID for consensus failures (scripts, amounts, a
//     coinbase on its own) and errors without a code of their own.
//
// Older Bitcoin Core sent "txn-already-in-mempool" and
// "txn-mempool-conflict" with REJECT_DUPLICATE; they are classified
// alike. Any other code or reason is RejectOther.
type RejectKind int

// The kinds of rejection.
const (
	// RejectOther: a code or reason not recognized.
	RejectOther RejectKind = iota
	// RejectAlreadyInMempool: the node has the transaction already.
	RejectAlreadyInMempool
	// RejectAlreadyConfirmed: the transaction is in the node's chain.
	RejectAlreadyConfirmed
	// RejectInsufficientFee: the fee (or a replacement's fee) is too low.
	RejectInsufficientFee
	// RejectNonStandard: valid, but outside the node's relay policy
	// (dust, size, script forms, sequence locks not met).
	RejectNonStandard
	// RejectInvalid: against the consensus rules, or a double spend of
	// a transaction in the node's mempool.
	RejectInvalid
)

// String names the kind, as in "insufficient fee".
func (k RejectKind) String() string {
	switch k {
	case RejectAlreadyInMempool:
		return "already in mempool"
	case RejectAlreadyConfirmed:
		return "already confirmed"
	case RejectInsufficientFee:
		return "insufficient fee"
	case RejectNonStandard:
		return "non-standard"
	case RejectInvalid:
		return "invalid"
	}
	return "other"
}

// Held reports whether the kind says the node holds the transaction
// already, in its mempool or its chain: a reject that is no refusal.
func (k RejectKind) Held() bool {
	return k == RejectAlreadyInMempool || k == RejectAlreadyConfirmed
}

// RejectError is a node's reject message for something we sent. It
// wraps ErrRejected.
type RejectError struct {
	Peer    string          // the node's address
	Command string          // the rejected message's command, such as "tx"
	Code    wire.RejectCode // the node's code
	Reason  string          // the node's words
	Hash    chainhash.Hash  // the rejected transaction or block
	Kind    RejectKind      // Code and Reason classified
}

// maxReasonShown bounds the node's words in an error message.
const maxReasonShown = 200

// Error gives the command, the hash, the kind, the code and (the first
// 200 bytes of) the reason, quoted.
func (e *RejectError) Error() string {
	reason := e.Reason
	if len(reason) > maxReasonShown {
		reason = reason[:maxReasonShown] + "..."
	}
	return fmt.Sprintf("%v: %s %v is %v (%v: %q)", ErrRejected, e.Command, e.Hash, e.Kind, e.Code, reason)
}

// Unwrap returns ErrRejected.
func (e *RejectError) Unwrap() error { return ErrRejected }

// DroppedError is a transaction a node asked for and then did not take,
// without a reject message: btcd does so with one spending outputs it
// does not know or that are spent in its chain (kept as an orphan). It
// wraps ErrRejected.
type DroppedError struct {
	Txid chainhash.Hash
	// Processed: the node answered a request sent after the transaction,
	// which btcd does only once it has processed it, so waiting longer
	// would not change the verdict. Otherwise it was looked for in the
	// node's mempool, and awaited as the node's announcement, for
	// Waited: that is no proof that the node does not hold it (Bitcoin
	// Core answers notfound for a transaction of its mempool it has not
	// announced yet, and announces after a random delay).
	Processed bool
	Waited    time.Duration
}

func (e *DroppedError) Error() string {
	if e.Processed {
		return fmt.Sprintf("%v: transaction %v requested, sent, and not in the node's mempool once the node had processed it", ErrRejected, e.Txid)
	}
	return fmt.Sprintf("%v: transaction %v requested, but neither seen in the node's mempool nor announced by it within %v", ErrRejected, e.Txid, e.Waited)
}

// Unwrap returns ErrRejected.
func (e *DroppedError) Unwrap() error { return ErrRejected }

// classifyReject tells what a reject code and reason mean for a
// transaction (see RejectKind).
func classifyReject(code wire.RejectCode, reason string) RejectKind {
	switch code {
	case wire.RejectDuplicate:
		switch {
		case strings.Contains(reason, "already have transaction"), strings.Contains(reason, "txn-already-in-mempool"):
			return RejectAlreadyInMempool
		case strings.Contains(reason, "already exists"):
			return RejectAlreadyConfirmed
		case strings.Contains(reason, "already spent"), strings.Contains(reason, "txn-mempool-conflict"),
			strings.Contains(reason, "orphan transaction"):
			return RejectInvalid
		}
	case wire.RejectInsufficientFee:
		return RejectInsufficientFee
	case wire.RejectNonstandard, wire.RejectDust:
		return RejectNonStandard
	case wire.RejectInvalid, wire.RejectMalformed:
		return RejectInvalid
	}
	return RejectOther
}

// waitReject registers a wait for the node's reject of the transaction
// txid; call the returned function to stop waiting.
func (p *Peer) waitReject(txid chainhash.Hash) (<-chan *RejectError, func()) {
	ch := make(chan *RejectError, 1)
	p.rejectMu.Lock()
	if p.rejectWaits == nil {
		p.rejectWaits = make(map[chainhash.Hash]chan *RejectError)
	}
	p.rejectWaits[txid] = ch
	p.rejectMu.Unlock()
	return ch, func() {
		p.rejectMu.Lock()
		if p.rejectWaits[txid] == ch {
			delete(p.rejectWaits, txid)
		}
		p.rejectMu.Unlock()
	}
}

// rejected passes a reject message to the Broadcast waiting for it, and
// logs it.
func (p *Peer) rejected(m *wire.MsgReject) {
	e := &RejectError{Peer: p.cfg.Addr, Command: Printable(m.Cmd), Code: m.Code, Reason: Printable(m.Reason), Hash: m.Hash,
		Kind: classifyReject(m.Code, m.Reason)}
	p.logf("peer %s: %v", p.cfg.Addr, e)
	if m.Cmd != wire.CmdTx {
		return
	}
	p.rejectMu.Lock()
	defer p.rejectMu.Unlock()
	if ch, ok := p.rejectWaits[m.Hash]; ok {
		select {
		case ch <- e:
		default:
		}
	}
}
