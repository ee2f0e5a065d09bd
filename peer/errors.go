package peer

import (
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Sentinel errors, wrapped in a *PeerError; test with errors.Is.
var (
	// ErrMissingService: the node does not advertise the service the
	// operation needs (NODE_BLOOM for BIP 37, NODE_COMPACT_FILTERS for BIP
	// 157, NODE_WITNESS for witness blocks). Nothing was sent.
	ErrMissingService = errors.New("node does not offer the required service")
	// ErrBadProof: a merkle block that does not prove what it claims, or
	// is not for the block that was asked for.
	ErrBadProof = errors.New("invalid merkle block")
	// ErrBadFilter: a compact filter that does not hash to its filter
	// header, is for the wrong block, or does not decode.
	ErrBadFilter = errors.New("invalid compact filter")
	// ErrBadFilterHeader: a filter-header chain that does not match the
	// checkpoints or the request.
	ErrBadFilterHeader = errors.New("invalid compact filter headers")
	// ErrBadHeaders: block headers that do not link up or fail proof of
	// work or the network's checkpoints.
	ErrBadHeaders = errors.New("invalid block headers")
	// ErrBadBlock: a full block that does not match its verified header.
	ErrBadBlock = errors.New("invalid block")
	// ErrAmbiguousBlock: a block whose coinbase, or a merkle block whose
	// matched transaction, is 64 bytes long (without its witness). Such a
	// transaction hashes like an inner node of the merkle tree, so the
	// tree can be read at more than one depth and what it proves is not
	// certain (CVE-2017-12842); in a full block, the coinbase fixes the
	// depth of every leaf, so only its own size matters, while a merkle
	// block shows no coinbase. Honest nodes can serve such a block
	// (consensus allows the transaction, only policy refuses it): it is
	// no proof of a lie.
	ErrAmbiguousBlock = errors.New("a 64-byte transaction where the merkle tree cannot tell it from an inner node: the block proves nothing")
	// ErrMissingTransactions: a merkle block whose matched transactions
	// did not all follow it.
	ErrMissingTransactions = errors.New("matched transactions withheld")
	// ErrMissingBlocks: requested blocks (or merkle blocks) that never
	// came, or were answered with notfound.
	ErrMissingBlocks = errors.New("requested blocks withheld")
	// ErrStalled: no answer within Config.Timeout, or a message not whole
	// within it after its header came.
	ErrStalled = errors.New("peer stalled")
	// ErrDisconnected: the connection closed.
	ErrDisconnected = errors.New("peer disconnected")
	// ErrAbandoned: the connection was dropped by this side, which
	// abandoned a request over it (its context ended, or its caller
	// stopped taking the answer), so that a late answer is not taken
	// for the next request's; the node did nothing wrong. Requests over
	// it fail with ErrDisconnected and ErrAbandoned: a caller dials the
	// node again rather than blame it.
	ErrAbandoned = errors.New("connection dropped by this side after it abandoned a request")
	// ErrProtocol: a message that breaks the protocol: undecodable, out
	// of order, or from a node too old to serve light clients.
	ErrProtocol = errors.New("protocol violation")
	// ErrDamaged: a message whose payload does not match the checksum in
	// its header: bytes changed on the way (or the node sent it so, which
	// nobody can tell apart). It proves nothing about the node, unlike
	// ErrProtocol and the errors of false data; the connection is ended,
	// since the stream can no longer be trusted.
	ErrDamaged = errors.New("message damaged on the way")
	// ErrRejected: a transaction the node asked for but did not accept.
	// When the node said why (a reject message), the error also holds a
	// *RejectError.
	ErrRejected = errors.New("transaction rejected")
	// ErrFlooding: a node that sent more unsolicited messages or bytes
	// than its budget allows (see the package documentation); the error
	// names the kind of message and the rate.
	ErrFlooding = errors.New("flooding")
	// ErrEcho: the version message that came back is the one this peer
	// sent, its nonce the same: a TCP echo service on the port, or a
	// connection that loops back to this client, and no node. It proves
	// no lie; the connection is ended.
	ErrEcho = errors.New("the node sent back this client's own version message")
)

// OversizeError is a message whose header claims a longer payload than
// its command allows (for every command, at most Core's 4,000,000-byte
// MAX_PROTOCOL_MESSAGE_LENGTH), refused before any byte of its payload
// is read. It wraps ErrProtocol; test with errors.As.
type OversizeError struct {
	Command string // as the header names it, unknown ones too
	Length  uint32 // the payload length the header claims
	Limit   uint32 // the command's limit
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("%v: %q message of %d bytes, at most %d accepted", ErrProtocol, e.Command, e.Length, e.Limit)
}

// Unwrap returns ErrProtocol.
func (e *OversizeError) Unwrap() error { return ErrProtocol }

// NetworkError is a message for another network than the connection's
// (its header's magic): a node of another network, or a service that is
// no Bitcoin node answering in its own protocol. It wraps ErrProtocol;
// test with errors.As.
type NetworkError struct {
	Got  wire.BitcoinNet // the magic the message carried
	Want wire.BitcoinNet // the connection's network's
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("%v: message for network %v, expected %v", ErrProtocol, e.Got, e.Want)
}

// Unwrap returns ErrProtocol.
func (e *NetworkError) Unwrap() error { return ErrProtocol }

// DecodeError is a message whose payload does not decode as its command
// says (its checksum matching, so it came as the node sent it). It wraps
// ErrProtocol and why it does not decode; test with errors.As.
type DecodeError struct {
	Command string // as the header names it
	Err     error  // why the payload does not decode
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%v: undecodable %q message: %v", ErrProtocol, e.Command, e.Err)
}

// Unwrap returns ErrProtocol and why the payload does not decode.
func (e *DecodeError) Unwrap() []error { return []error{ErrProtocol, e.Err} }

// TimeoutError is a request that got no complete answer, or a message
// that could not be sent, within the connection's timeout
// (Config.Timeout). It wraps ErrStalled; test with errors.As.
type TimeoutError struct {
	What   string        // what did not happen in time, such as "no complete answer"
	Within time.Duration // the timeout
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%v: %s within %v", ErrStalled, e.What, e.Within)
}

// Unwrap returns ErrStalled.
func (e *TimeoutError) Unwrap() error { return ErrStalled }

// UnansweredError is a request the node finished without answering it
// whole: the pong of a ping sent right after the request came first, so
// no more of the answer will come (see the package documentation). btcd
// does so for the filters or filter headers of a block no longer on its
// chain, which an honest reorganization leaves, and for every such
// request while it is not synced (its tip more than a day old); a lying
// node may do so too. It proves no lie: it is what a request that timed
// out would have been, at once. It wraps ErrStalled; test with
// errors.As.
type UnansweredError struct {
	Got  int // the messages of the answer the node sent
	Want int // the messages the answer needed
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("%v: no complete answer: %d of %d messages before the pong of a ping sent after the request (the node will send no more of it; btcd does so for blocks no longer on its chain, and while it is not synced)",
		ErrStalled, e.Got, e.Want)
}

// Unwrap returns ErrStalled.
func (e *UnansweredError) Unwrap() error { return ErrStalled }

// ProxyError is a connection through the SOCKS5 proxy of SOCKS5 that
// failed at the proxy: the proxy itself could not be reached (Target
// empty), or it was reached and did not connect to Target (it refused,
// wanted other credentials, could not reach Target, or did not answer
// as a SOCKS5 proxy in time). Either way nothing reached the node, and
// nothing was tried without the proxy. Test with errors.As.
type ProxyError struct {
	Proxy  string // the proxy's host:port
	Target string // the address the proxy did not connect to; "" when the proxy was not reached
	Err    error  // why: the proxy's reply, or the failure to reach it
}

func (e *ProxyError) Error() string {
	if e.Target != "" {
		return fmt.Sprintf("SOCKS5 proxy %s did not connect to %s: %v", e.Proxy, e.Target, e.Err)
	}
	return fmt.Sprintf("SOCKS5 proxy %s unreachable: %v", e.Proxy, e.Err)
}

// Unwrap returns why the connection failed at the proxy.
func (e *ProxyError) Unwrap() error { return e.Err }

// The operations of a *PeerError that no request names: the connection
// (the dial, through Config.Dial if set) and the version handshake.
const (
	OpConnect   = "connect"
	OpHandshake = "version handshake"
)

// PeerError reports what a peer did wrong during an operation.
type PeerError struct {
	Peer string // the peer's address
	Op   string // the operation or request, such as "getcfilters"
	Err  error  // wraps one of the sentinel errors
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("peer %s: %s: %v", e.Peer, e.Op, e.Err)
}

// Unwrap returns the underlying error.
func (e *PeerError) Unwrap() error { return e.Err }

// ErrNoVerdict: a node that gives no verdict of its own on a
// transaction it was given (see NoVerdictError).
var ErrNoVerdict = errors.New("no verdict")

// NoVerdictError is a node that does not call itself btcd, given the
// transaction Txid, that neither showed it in its mempool nor announced
// it while it was awaited (Waited), or announced it and did not serve it
// (Unserved): nothing tells whether it took it.
// Bitcoin Core sends no reject message (BIP 61 was removed), asks for no
// transaction it has or refused lately, and serves none of its mempool
// by getdata before it announced it, after a random delay. Requested
// says whether the node asked for the transaction; Enough, that the
// caller ended the wait (see BroadcastUntil) before the timeout.
// Unserved, if not nil, is the node's announcement that went unserved on
// the watch (see CheckWithin), which ended the wait before the timeout:
// the one word the node gives told nothing, and nothing else would
// within it. It wraps ErrNoVerdict, not ErrRejected: it is no refusal.
type NoVerdictError struct {
	Txid      chainhash.Hash
	Requested bool
	Waited    time.Duration
	Enough    bool
	Unserved  *UnservedAnnounceError
}

func (e *NoVerdictError) Error() string {
	asked := "did not ask for it"
	if e.Requested {
		asked = "asked for it"
	}
	why := ""
	if e.Enough {
		why = ", the wait ended by the caller"
	}
	if e.Unserved != nil {
		return fmt.Sprintf("%v: transaction %v: the node %s, and did not show it in its mempool within %v; it announced it on a second connection and served nothing within %v of being asked for it there, which tells nothing%s",
			ErrNoVerdict, e.Txid, asked, e.Waited.Round(time.Millisecond), e.Unserved.Within, why)
	}
	return fmt.Sprintf("%v: transaction %v: the node %s, and neither showed it in its mempool nor announced it within %v%s", ErrNoVerdict, e.Txid, asked, e.Waited.Round(time.Millisecond), why)
}

// Unwrap returns ErrNoVerdict.
func (e *NoVerdictError) Unwrap() error { return ErrNoVerdict }
