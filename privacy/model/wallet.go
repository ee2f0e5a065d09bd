package model

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// Wallet is a set of keys whose filter elements are, as in bitcoinj, each
// compressed public key and its HASH160.
type Wallet struct {
	PubKeys [][]byte
	Hashes  [][]byte
}

// NewWallet derives n real secp256k1 keys deterministically from seed
// (private key i is SHA-256 of the seed and i), so that a demonstration
// or test can be rerun exactly.
func NewWallet(seed uint64, n int) *Wallet {
	w := &Wallet{}
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], seed)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(buf[8:], uint64(i))
		priv := chainhash.HashB(buf[:])
		_, pub := btcec.PrivKeyFromBytes(priv)
		pk := pub.SerializeCompressed()
		w.PubKeys = append(w.PubKeys, pk)
		w.Hashes = append(w.Hashes, btcutil.Hash160(pk))
	}
	return w
}

// Filter returns the wallet's BIP 37 filter with bitcoinj's layout, sized
// by Bitcoin Core's rules: FilterWith(SizingCore, ...).
func (w *Wallet) Filter(fpRate float64, extra, tweak uint32) *bip37.Filter {
	return w.FilterWith(SizingCore, fpRate, extra, tweak)
}

// FilterWith returns the wallet's BIP 37 filter with bitcoinj's layout:
// sized by rule for 2 elements per key plus extra, at fpRate, holding every
// key and key hash, with flags BLOOM_UPDATE_P2PUBKEY_ONLY. With
// SizingBitcoinj it is the filter bitcoinj itself builds (16 hash
// functions for 266 keys and 100 extra elements at 0.00001, where Core's
// rule gives 15).
func (w *Wallet) FilterWith(rule SizingRule, fpRate float64, extra, tweak uint32) *bip37.Filter {
	f := rule.NewFilter(uint32(2*len(w.PubKeys))+extra, fpRate, tweak, wire.BloomUpdateP2PubkeyOnly)
	for i := range w.PubKeys {
		f.Add(w.PubKeys[i])
		f.Add(w.Hashes[i])
	}
	return f
}

// Addresses returns the wallet's P2PKH addresses on the given network.
func (w *Wallet) Addresses(params *chaincfg.Params) []string {
	out := make([]string, 0, len(w.Hashes))
	for _, h := range w.Hashes {
		a, err := btcutil.NewAddressPubKeyHash(h, params)
		if err != nil {
			panic(err) // a 20-byte hash always makes an address
		}
		out = append(out, a.EncodeAddress())
	}
	return out
}

// randomBytes fills b from rng.
func randomBytes(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		var x [8]byte
		binary.LittleEndian.PutUint64(x[:], rng.Uint64())
		copy(b[i:], x[:])
	}
}
