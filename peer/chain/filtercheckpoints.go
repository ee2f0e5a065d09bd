package chain

import (
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ErrFilterCheckpoint is returned by CheckFilterHeader for a basic filter
// header that differs from the one hard-coded for that height: whoever
// sent it serves another chain or lies.
var ErrFilterCheckpoint = errors.New("filter header does not match the hard-coded checkpoint")

// FilterCheckpoint is the BIP 157 basic (type 0) filter header of the
// block at Height, in the byte order of wire.MsgCFHeaders and
// wire.MsgCFCheckpt.
type FilterCheckpoint struct {
	Height int32
	Header chainhash.Hash
}

// filterCheckpoints are the basic filter headers lightninglabs/neutrino
// hard-codes in chainsync/filtercontrol.go (the mainnet and testnet3
// entries as in its release v0.16.0, the testnet4 ones as on its master
// branch; the two agree where both have an entry). Like neutrino's map
// they are written in display order and parsed with
// chainhash.NewHashFromStr. Bitcoin Core hard-codes no filter headers, so
// there is no second source to check them against, and neither project
// has any for signet: FilterCheckpoints(&chaincfg.SigNetParams) is empty.
var filterCheckpoints = map[wire.BitcoinNet][]FilterCheckpoint{
	chaincfg.MainNetParams.Net: {
		{100000, *mustHash("f28cbc1ab369eb01b7b5fe8bf59763abb73a31471fe404a26a06be4153aa7fa5")},
		{200000, *mustHash("e5031471732f4fbfe7a25f6a03acc1413300d5c56ae8e06b95046b8e4c0f32b3")},
		{300000, *mustHash("1bd50220fcdde929ca3143c91d2dd9a9bfedb38c452ba98dbb51e719bff8aa5b")},
		{400000, *mustHash("5d973ab1f1c569c70deec1c1a8fb2e317a260f1656edb3b262c65f78ef192e3a")},
		{500000, *mustHash("5d16ca293c9bdc0a9bc279b63f99fb661be38b095a59a44200a807caaa631a3c")},
		{600000, *mustHash("bde0854d0b2f4386a860462547140e0c6817f5b4b2ab515ef70e204e377598f8")},
		{660000, *mustHash("08312375fabc082b17fa8ee88443feb350c19a34bb7483f94f7478fa4ad33032")},
	},
	chaincfg.TestNet3Params.Net: {
		{100000, *mustHash("97c0633f14625627fcd133250ad8cc525937e776b5f3fd272b06d02c58b65a1c")},
		{200000, *mustHash("51aa817e5abe3acdcf103616b1a5736caf84bc3773a7286e9081108ecc38cc87")},
		{400000, *mustHash("4aab9b3d4312cd85cfcd48a08b36c4402bfdc1e8395dcf4236c3029dfa837c48")},
		{600000, *mustHash("713d9c9198e2dba0739e85aab6875cb951c36297b95a2d51131aa6919753b55d")},
		{800000, *mustHash("0dafdff27269a70293c120b14b1f5e9a72a5e8688098cfc6140b9d64f8325b99")},
		{1000000, *mustHash("c2043fa2f6eb5f8f8d2c5584f743187f36302ed86b62c302e31155f378da9c5f")},
		{1400000, *mustHash("f9ae1750483d4c8ce82512616b1ded932886af46decb8d3e575907930542d9b3")},
		{1500000, *mustHash("dc0cfa13daf09df9b8dbe7532f75ebdb4255860b295016b2ca4b789394bc5090")},
		{1800000, *mustHash("67083b2d5dfc9ca1415bffa14e43a5bbe595e2e8b7ffbcc7a4ea78fa069a9c8d")},
		{1900000, *mustHash("96a31467f9edcaa3297770bc6cdf66926d5d17dfad70cb0cac285bfe9075c494")},
	},
	TestNet4Net: {
		{10000, *mustHash("5bf92ba99cc9e4971e705ab3c4a2a78ef0ea40986ab20f2c06ebfe7751e3fbb8")},
		{50000, *mustHash("66592214f388e315256e5c6362750b858d580dec269500ecca7a4fbb8042b8e3")},
	},
}

// FilterCheckpoints returns the hard-coded basic filter headers of the
// network, in increasing height, each at a multiple of 1000 (a cfcheckpt
// interval); none for a network without any (regtest, simnet, signet, a
// custom network). The network is recognised by its magic. The slice is a
// copy.
func FilterCheckpoints(params *chaincfg.Params) []FilterCheckpoint {
	return slices.Clone(filterCheckpoints[params.Net])
}

// CheckFilterHeader checks a basic filter header a peer gave for the block
// at height against the network's hard-coded one: nil when they agree or
// no checkpoint exists at that height, an error wrapping
// ErrFilterCheckpoint otherwise.
func CheckFilterHeader(params *chaincfg.Params, height int32, header chainhash.Hash) error {
	cps := filterCheckpoints[params.Net]
	i, ok := slices.BinarySearchFunc(cps, height, func(cp FilterCheckpoint, h int32) int { return int(cp.Height - h) })
	if !ok || cps[i].Header == header {
		return nil
	}
	return fmt.Errorf("%w: %s height %d: got %v, want %v", ErrFilterCheckpoint, params.Name, height, header, cps[i].Header)
}
