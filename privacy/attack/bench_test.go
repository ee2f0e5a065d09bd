package attack

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// benchUniverse is n lines of random 20-byte hashes in hex.
func benchUniverse(n int) []byte {
	rng := rand.New(rand.NewPCG(42, 42))
	var h [20]byte
	out := make([]byte, 0, n*41)
	for i := 0; i < n; i++ {
		randomBytes(rng, h[:])
		out = hex.AppendEncode(out, h[:])
		out = append(out, '\n')
	}
	return out
}

// BenchmarkAnalyzeHex measures candidates per second of one bitcoinj-like
// filter (266 keys at 0.0005) against hex hash lines: our streaming,
// parallel Analyze against a straightforward loop over btcutil's bloom
// filter (bufio.Scanner, hex.DecodeString, Matches).
func BenchmarkAnalyzeHex(b *testing.B) {
	const n = 1_000_000
	data := benchUniverse(n)
	w := model.NewWallet(1, 266)
	f := w.Filter(0.0005, 100, 7)
	msg := f.MsgFilterLoad()

	b.Run("hex/spvfilter", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			r, err := Analyze([]*bip37.Filter{f}, bytes.NewReader(data), AnalyzeOptions{})
			if err != nil || r.UniverseSize != n {
				b.Fatal(r, err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
	})
	b.Run("hex/btcutil", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			bf := bloom.LoadFilter(&wire.MsgFilterLoad{Filter: msg.Filter, HashFuncs: msg.HashFuncs, Tweak: msg.Tweak, Flags: msg.Flags})
			sc := bufio.NewScanner(bytes.NewReader(data))
			count, matched := 0, 0
			for sc.Scan() {
				h, err := hex.DecodeString(sc.Text())
				if err != nil {
					b.Fatal(err)
				}
				count++
				if bf.Matches(h) {
					matched++
				}
			}
			if count != n {
				b.Fatal(count)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
	})
}

// BenchmarkAnalyzeAddresses is the same over addresses, half base58 P2PKH
// and half bech32 P2WPKH, as in a universe collected from recent blocks:
// our Analyze against btcutil.DecodeAddress and the btcutil filter.
func BenchmarkAnalyzeAddresses(b *testing.B) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(43, 43))
	var h [20]byte
	var data []byte
	for i := 0; i < n; i++ {
		randomBytes(rng, h[:])
		var a btcutil.Address
		var err error
		if i%2 == 0 {
			a, err = btcutil.NewAddressPubKeyHash(h[:], &chaincfg.MainNetParams)
		} else {
			a, err = btcutil.NewAddressWitnessPubKeyHash(h[:], &chaincfg.MainNetParams)
		}
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, a.EncodeAddress()...)
		data = append(data, '\n')
	}
	f := model.NewWallet(1, 266).Filter(0.0005, 100, 7)
	msg := f.MsgFilterLoad()
	b.Run("address/spvfilter", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r, err := Analyze([]*bip37.Filter{f}, bytes.NewReader(data), AnalyzeOptions{})
			if err != nil || r.UniverseSize != n {
				b.Fatal(r, err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
	})
	b.Run("address/btcutil", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			bf := bloom.LoadFilter(&wire.MsgFilterLoad{Filter: msg.Filter, HashFuncs: msg.HashFuncs, Tweak: msg.Tweak, Flags: msg.Flags})
			sc := bufio.NewScanner(bytes.NewReader(data))
			count := 0
			for sc.Scan() {
				a, err := btcutil.DecodeAddress(sc.Text(), &chaincfg.MainNetParams)
				if err != nil {
					b.Fatal(err)
				}
				count++
				bf.Matches(a.ScriptAddress())
			}
			if count != n {
				b.Fatal(count)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
	})
}
