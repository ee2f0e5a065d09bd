package attack

import (
	"encoding/binary"
	"math/rand/v2"
)

// randomBytes fills b from rng.
func randomBytes(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		var x [8]byte
		binary.LittleEndian.PutUint64(x[:], rng.Uint64())
		copy(b[i:], x[:])
	}
}
