package model

import (
	"math"

	"github.com/spvfilter/spvfilter/gcs"
)

// CompareParams describes the same wallet under BIP 37 and BIP 157.
type CompareParams struct {
	// Model is the wallet and the BIP 37 attacker (see Params).
	Model Params `json:"model_params"`
	// WatchPerAddress is the number of BIP 158 items the client watches
	// per address: 1, its output script.
	WatchPerAddress uint32 `json:"watch_per_address"`
	// ElementsPerBlock is the number of distinct items in a block's basic
	// filter (output scripts and spent output scripts).
	ElementsPerBlock uint32 `json:"elements_per_block"`
	// Blocks is the number of blocks the client scans; WalletBlocks of
	// them hold a wallet transaction.
	Blocks       uint64 `json:"blocks"`
	WalletBlocks uint64 `json:"wallet_blocks"`
	// Appearances is the blocks each script appears in, Decoys the random
	// blocks fetched per real one, Peers the peers the downloads are
	// spread over (see FetchSide).
	Appearances uint32  `json:"appearances"`
	Decoys      float64 `json:"decoys"`
	Peers       uint32  `json:"peer_count"`
}

// DefaultCompareParams are the compare command's defaults: the model's
// defaults, one watched script per address, blocks of 5000 filter items
// (an assumption of the order of recent mainnet blocks, about 3000
// transactions), a year of blocks (144 a day) and one wallet block per
// address; each script in 2 blocks (a receive and its spend), no decoys,
// one peer.
func DefaultCompareParams() CompareParams {
	m := DefaultParams()
	return CompareParams{Model: m, WatchPerAddress: 1, ElementsPerBlock: 5000, Blocks: 52560, WalletBlocks: uint64(m.Addresses),
		Appearances: 2, Peers: 1}
}

// BIP157Side is what a node serving a BIP 157 client learns: which blocks
// it downloads.
type BIP157Side struct {
	WatchItems uint64 `json:"watch_item_count"`
	// BlockFPRate is 1-(1-1/(Nb·M))^(W·Nb): the chance that one of W
	// watched items collides with one of the Nb items of a block's filter
	// (each pair collides with probability 1/(Nb·M)); about 1-e^(-W/M).
	BlockFPRate float64 `json:"block_false_positive_rate"`
	// ExpectedFalsePositiveBlocks is (Blocks-WalletBlocks)·BlockFPRate.
	ExpectedFalsePositiveBlocks float64 `json:"expected_false_positive_blocks"`
	// PBlockIsWallet is R/(R+F): a downloaded block holds a wallet
	// transaction.
	PBlockIsWallet float64 `json:"p_block_is_wallet"`
	// Candidates is (R+F)·Nb: every item of every downloaded block is a
	// candidate, and PCandidate = min(N/Candidates, 1) the chance that one
	// of them is the wallet's.
	Candidates float64 `json:"expected_candidates"`
	PCandidate float64 `json:"p_candidate"`
}

// Comparison holds both sides.
type Comparison struct {
	Params CompareParams `json:"params"`
	BIP37  *Result       `json:"bip37"`
	BIP157 BIP157Side    `json:"bip157"`
	// Fetches is the block-download attack on the BIP 157 client.
	Fetches FetchSide `json:"block_download_attack"`
}

// Compare evaluates the same wallet under both protocols.
func Compare(p CompareParams) (*Comparison, error) {
	m, err := Evaluate(p.Model)
	if err != nil {
		return nil, err
	}
	p.Model = m.Params
	switch {
	case p.WatchPerAddress == 0:
		return nil, outOf("watch_per_address", p.WatchPerAddress, WholeAtLeast(1))
	case p.ElementsPerBlock == 0:
		return nil, outOf("elements_per_block", p.ElementsPerBlock, WholeAtLeast(1))
	case p.Blocks == 0:
		return nil, outOf("blocks", p.Blocks, WholeAtLeast(1))
	case p.WalletBlocks > p.Blocks:
		return nil, boundBy("wallet_blocks", p.WalletBlocks, "blocks", p.Blocks, p.Blocks, "more than the %d blocks scanned", p.Blocks)
	case uint64(p.Appearances) > p.Blocks:
		return nil, boundBy("appearances", p.Appearances, "blocks", p.Blocks, p.Blocks, "more than the %d blocks scanned", p.Blocks)
	case p.Appearances > 0 && p.WalletBlocks < uint64(p.Appearances):
		// Each of the wallet's scripts appears in k blocks: a wallet of
		// fewer blocks (none: a wallet without transactions) has no
		// script the block-download attack could find.
		return nil, boundBy("wallet_blocks", p.WalletBlocks, "appearances", p.Appearances, nil,
			"fewer than the %d blocks each of the wallet's scripts appears in (appearances)", p.Appearances)
	}
	w := uint64(p.Model.Addresses) * uint64(p.WatchPerAddress)
	nb := float64(p.ElementsPerBlock)
	q := -math.Expm1(float64(w) * nb * math.Log1p(-1/(nb*gcs.BasicM)))
	f := float64(p.Blocks-p.WalletBlocks) * q
	r := float64(p.WalletBlocks)
	side := BIP157Side{WatchItems: w, BlockFPRate: q, ExpectedFalsePositiveBlocks: f}
	if r+f > 0 {
		side.PBlockIsWallet = r / (r + f)
	}
	side.Candidates = (r + f) * nb
	if side.Candidates > 0 {
		side.PCandidate = math.Min(float64(p.Model.Addresses)/side.Candidates, 1)
	}
	fs, err := fetchSide(p, f)
	if err != nil {
		return nil, err
	}
	return &Comparison{Params: p, BIP37: m, BIP157: side, Fetches: fs}, nil
}
