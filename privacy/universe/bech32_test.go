package universe

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
)

// segwitReference decodes with btcutil's bech32 package and applies the
// segwit rules of BIP 141, BIP 173 and BIP 350.
func segwitReference(s string) ([]byte, bool) {
	if len(s) > 90 {
		return nil, false
	}
	_, data, version, err := bech32.DecodeGeneric(s)
	if err != nil || len(data) == 0 {
		return nil, false
	}
	witVer := data[0]
	prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil || witVer > 16 || len(prog) < 2 || len(prog) > 40 {
		return nil, false
	}
	switch {
	case witVer == 0 && version != bech32.Version0:
		return nil, false
	case witVer == 0 && len(prog) != 20 && len(prog) != 32:
		return nil, false
	case witVer != 0 && version != bech32.VersionM:
		return nil, false
	}
	return prog, true
}

// TestDecodeSegwitAgreesWithBtcutil compares the allocation-free decoder
// with btcutil's on valid addresses of every witness version, length, case
// and network, and on mutations of them.
func TestDecodeSegwitAgreesWithBtcutil(t *testing.T) {
	src := rand.NewChaCha8([32]byte{6, 7})
	rng := rand.New(src)
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	check := func(s string) {
		var out [40]byte
		got, ok := decodeSegwit([]byte(s), &out)
		want, wantOK := segwitReference(s)
		if ok != wantOK || ok && !bytes.Equal(got, want) {
			t.Fatalf("%q: ours %v %x, btcutil %v %x", s, ok, got, wantOK, want)
		}
	}
	for i := 0; i < 4000; i++ {
		ver := byte(rng.IntN(17))
		n := 2 + rng.IntN(39)
		if ver == 0 {
			n = []int{20, 32}[rng.IntN(2)]
		}
		if i%10 == 0 {
			n = 1 + rng.IntN(42) // also bad lengths
		}
		prog := make([]byte, n)
		src.Read(prog)
		conv, _ := bech32.ConvertBits(prog, 8, 5, true)
		hrp := []string{"bc", "tb", "bcrt", "sb", "x"}[rng.IntN(5)]
		var s string
		var err error
		if ver == 0 && i%3 != 0 || ver != 0 && i%3 == 0 {
			s, err = bech32.Encode(hrp, append([]byte{ver}, conv...))
		} else {
			s, err = bech32.EncodeM(hrp, append([]byte{ver}, conv...))
		}
		if err != nil {
			continue
		}
		check(s)
		check(strings.ToUpper(s))
		b := []byte(s)
		b[rng.IntN(len(b))] = charset[rng.IntN(32)]
		check(string(b))
		check(s[:len(s)-1])
		check(s + "q")
		b = []byte(s)
		b[rng.IntN(len(b))] ^= 0x20 // mixed case
		check(string(b))
	}
}
