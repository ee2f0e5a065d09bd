package client

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// Match is a transaction found by a scan.
type Match struct {
	Txid      chainhash.Hash
	Tx        *wire.MsgTx
	Height    int32
	BlockHash chainhash.Hash
	// TxIndex is the transaction's position in its block.
	TxIndex int
	// WatchItems are the indexes, into the watch list, of the items the
	// transaction pays to or spends from.
	WatchItems []int
	// Spends are its inputs that spend a watched output: an outpoint
	// watched or found earlier, or an output of a watched script the
	// input shows it spends.
	Spends []Spend
	// FalsePositive marks a transaction the node sent because the BIP 37
	// filter matched it, but which involves no watch item.
	FalsePositive bool
}

// ScanResult is what a scan found, what it cost, and what it rests on.
type ScanResult struct {
	// From and To are the heights scanned (To resolved from a negative
	// ScanRequest.To).
	From, To int32
	Matches  []Match
	// BlocksScanned is the number of blocks in the range.
	BlocksScanned int
	// FiltersReceived counts compact filters (BIP 157); with a privacy
	// target, those of the covers' margin below From too.
	FiltersReceived int
	// MerkleBlocksReceived counts merkle blocks (BIP 37).
	MerkleBlocksReceived int
	// BlocksFetched counts full blocks downloaded (BIP 157), the
	// covers' below From among them, which are never scanned for the
	// watch list.
	BlocksFetched int
	// FalsePositiveBlocks counts blocks the filter matched that hold no
	// transaction of the watch list and, for BIP 157, no spend of a
	// watched script either.
	FalsePositiveBlocks int
	// SpendOnlyBlocks lists the heights of BIP 157 blocks whose filter
	// matched a watched script that no output of the block pays: an input
	// spends it without showing it (P2TR key path, P2PK, bare multisig),
	// so only a watched outpoint can name the transaction.
	SpendOnlyBlocks []int32
	// FilteringPeer is the peer that filtered the blocks of a BIP 37
	// scan (the result rests on it).
	FilteringPeer string
	// FilterReloads counts the BIP 37 filters replaced by fresh ones
	// because they matched far more than their false-positive rate.
	FilterReloads int
	// BIP37Peers lists every peer that received a filter of a BIP 37
	// scan, passes abandoned included, with what it received.
	BIP37Peers []BIP37Peer
	// BytesReceived counts every byte read from the nodes during the
	// scan.
	BytesReceived uint64
	// Disconnected lists the blocks that left the chain during the scan,
	// or since the chain was last reported (a reorganization, however
	// deep, found in a data directory too): each reorganization's blocks
	// lowest first, the reorganizations in the order they came. Nothing
	// found in them is in Matches.
	Disconnected []chainhash.Hash
	// Conflicts lists the blocks of a BIP 157 scan whose filter the peers
	// (or the data directory and the peers) disagree on and the block
	// cannot decide: each was scanned whole, so nothing it holds is
	// missing whichever side is right; nobody was banned for it.
	Conflicts []Conflict
	// OnePeer lists the heights of a BIP 157 scan that only one peer
	// could speak for (the others' chains end below them): what was found
	// there rests on that peer alone. With a single peer the whole result
	// does, and Warnings says so instead.
	OnePeer []OnePeer
	// Peers describes every peer of the client after the scan.
	Peers []PeerStatus
	// Leak is what the peers could conclude about the watch list from
	// everything the client asked them since it connected (and, with a
	// data directory, in earlier runs): the block-download attack per
	// peer and all of them colluding (see leak.go). A BIP 157 scan's
	// that asked for it (ScanRequest.Leak); nil in BIP 37 mode, in
	// rescans' steps (Rescan.Leak computes it on demand), or when it
	// could not be computed (a warning says why).
	Leak *leak.Leak
	// Cover is what the covers of a BIP 157 scan with a privacy target
	// cost and whether they met it (Config.PrivacyTarget); nil without.
	Cover *CoverCost
	// Warnings are what may make the result incomplete or less
	// trustworthy than it looks, such as resting on one unverified peer:
	// written for people; WarningKindOf tells what each is about.
	Warnings []string

	// headers are those of the blocks From..To scanned, and
	// filterHeaders the verified filter headers of From-1..To they were
	// scanned against (ScanRequest.withHeaders).
	headers       []wire.BlockHeader
	filterHeaders []chainhash.Hash
	// fetches are what the scan's block fetches asked of each peer, for a
	// rescan, which adds them up over its steps (see rescanWarnings).
	fetches *fetchLog
}

// filterHeader returns the verified filter header the block at height h
// was scanned against, zero if the result does not keep it.
func (r *ScanResult) filterHeader(h int32) chainhash.Hash {
	if i := int(h - r.From + 1); i >= 0 && i < len(r.filterHeaders) {
		return r.filterHeaders[i]
	}
	return chainhash.Hash{}
}

// PeerStatus is what the client knows of one peer.
type PeerStatus struct {
	Address   string
	UserAgent string
	// Services are the services the peer advertised, as btcd names them.
	Services string
	// Banned is set for a peer caught lying; it is not asked again.
	Banned bool
	// Reason says why a peer is banned or not used (stalled,
	// disconnected, unreachable), empty for a peer in use.
	Reason string
	// Err is the error Reason says, nil for a peer in use: errors.As
	// finds the peer package's *peer.PeerError (with its
	// *peer.TimeoutError, *peer.DecodeError, *peer.NetworkError or
	// *peer.ProxyError) and errors.Is its sentinels (peer.ErrStalled,
	// peer.ErrDisconnected).
	Err error
	// Compared is set when the peer's answers of the last scan were
	// compared with another peer's: only such peers count towards the
	// one-honest-peer guarantee.
	Compared bool
	// Tip is the highest height of the client's chain the peer is known
	// to hold (-1 if none).
	Tip int32
	// Branch, if not nil, is where the peer's chain leaves the client's
	// (a branch with less work than the client's).
	Branch *Branch
	// BytesReceived and BytesSent count every byte of the peer's
	// connections, across redials.
	BytesReceived, BytesSent uint64
}

// OnePeer is a range of heights only one peer could speak for.
type OnePeer struct {
	From, To int32
	Peer     string
}

func (o OnePeer) String() string {
	return fmt.Sprintf("heights %d..%d rest on one peer: %s (no other peer's chain reaches them)", o.From, o.To, o.Peer)
}

// Branch is a peer's chain where it leaves the client's: the peer holds
// the client's chain up to Fork, then blocks of its own up to Height.
type Branch struct {
	Fork   int32
	Height int32
	Hash   chainhash.Hash
}

// ScanRequest says what a scan looks for and where.
type ScanRequest struct {
	// Watch is the watch list; Match.WatchItems index into it.
	Watch []WatchItem
	// From and To bound the heights scanned, inclusive. A negative To
	// means the highest height a connected peer holds (which may be below
	// the chain's tip: see ScanResult.To).
	From, To int32
	// Progress, if not nil, is called as blocks are done.
	Progress func(done, total int)
	// Leak asks a BIP 157 scan for ScanResult.Leak. It costs one test of
	// every verified filter the cache holds in the ranges the peers were
	// asked for against the scripts of the fetched blocks (leak.Compute):
	// on a 2,000-block chain of 500 scripts a block, 100 watched scripts,
	// about 11 s against the scan's 0.4 s.
	Leak bool
	// withHeaders keeps the headers of the blocks scanned in the result
	// (for a rescan, which reports them after the scan returns).
	withHeaders bool
}

// Confirmation is where a transaction was mined.
type Confirmation struct {
	Height    int32
	BlockHash chainhash.Hash
}

// Stamp names a block of the chain.
type Stamp struct {
	Height int32
	Hash   chainhash.Hash
	Header wire.BlockHeader
}

// CoverCost is what the covers of a scan cost and whether they met the
// target (Config.PrivacyTarget).
type CoverCost struct {
	// Target is the privacy target the covers were sized for.
	Target float64 `json:"target"`
	// Covers counts the covers in use after the scan, Drawn those of
	// them drawn by this scan, Reserve the candidates kept for later.
	Covers  int `json:"cover_count"`
	Drawn   int `json:"drawn_count"`
	Reserve int `json:"reserve_count"`
	// WalletBlocks and WalletBytes are the blocks fetched for the watch
	// list (or that a cover and the watch list share) and their size;
	// CoverBlocks and CoverBytes those fetched only for covers or to
	// explore for them: the price of the target over a scan without it.
	WalletBlocks int    `json:"wallet_blocks_fetched"`
	WalletBytes  uint64 `json:"wallet_bytes_received"`
	CoverBlocks  int    `json:"cover_blocks_fetched"`
	CoverBytes   uint64 `json:"cover_bytes_received"`
	// ExploredBlocks counts the blocks fetched, before any of the
	// wallet's, to find candidates for covers (among CoverBlocks; never
	// a block of the wallet's nor of a cover in use).
	ExploredBlocks int `json:"explored_blocks_fetched"`
	// Met is true when every class of the wallet's chains has cover
	// chains enough for the target in this scan's fetches; Why says why
	// not.
	Met bool   `json:"met"`
	Why string `json:"why,omitempty"`
}

// String is the cost in one line.
func (k *CoverCost) String() string {
	pct := func(a, b uint64) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
	}
	s := fmt.Sprintf("covers for privacy target %g: %d covers (%d new); %d cover blocks (%s of the wallet's %d), %d bytes (%s of the wallet's %d)",
		k.Target, k.Covers, k.Drawn, k.CoverBlocks, pct(uint64(k.CoverBlocks), uint64(k.WalletBlocks)), k.WalletBlocks,
		k.CoverBytes, pct(k.CoverBytes, k.WalletBytes), k.WalletBytes)
	if k.Met {
		return s + "; target met"
	}
	return s + "; target NOT met: " + k.Why
}
