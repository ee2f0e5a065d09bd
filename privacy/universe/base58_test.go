package universe

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// TestBase58Check25AgreesWithBtcutil compares the allocation-free decoder
// with btcutil's base58.CheckDecode on valid addresses of every version
// byte, on corrupted ones and on random strings.
func TestBase58Check25AgreesWithBtcutil(t *testing.T) {
	src := rand.NewChaCha8([32]byte{8, 9})
	rng := rand.New(src)
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	check := func(s string) {
		var out [25]byte
		got := decodeBase58Check25([]byte(s), &out)
		payload, version, err := base58.CheckDecode(s)
		want := err == nil && len(payload) == 20
		if got != want {
			t.Fatalf("%q: ours %v, btcutil %v (%v, %d bytes)", s, got, want, err, len(payload))
		}
		if got && (out[0] != version || !bytes.Equal(out[1:21], payload)) {
			t.Fatalf("%q: decoded %x, btcutil %d %x", s, out, version, payload)
		}
	}
	var h [20]byte
	for i := 0; i < 3000; i++ {
		src.Read(h[:])
		if i%5 == 0 {
			for j := 0; j < rng.IntN(4); j++ {
				h[j] = 0 // leading zero bytes after the version
			}
		}
		s := base58.CheckEncode(h[:], byte(rng.IntN(256)))
		if i%7 == 0 {
			s = base58.CheckEncode(h[:], 0)
		}
		check(s)
		// One character changed, one dropped, one added.
		b := []byte(s)
		b[rng.IntN(len(b))] = alphabet[rng.IntN(58)]
		check(string(b))
		check(s[1:])
		check(s + "1")
		check("1" + s)
	}
	for i := 0; i < 3000; i++ {
		b := make([]byte, 24+rng.IntN(13))
		for j := range b {
			b[j] = alphabet[rng.IntN(58)]
		}
		check(string(b))
	}
	check("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH")
	check("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")
	check("0BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH")
}
