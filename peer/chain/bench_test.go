package chain

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
)

// BenchmarkExtendMainnet connects btcd's 14,132 real mainnet headers to a
// new chain in headers messages of 2,000, as header sync does, under the
// full rules: the cost per header is ns/op divided by 14,131.
func BenchmarkExtendMainnet(b *testing.B) {
	hs := mainnetHeaders(b)[1:]
	b.ReportAllocs()
	for b.Loop() {
		c := New(&chaincfg.MainNetParams)
		for i := 0; i < len(hs); i += 2000 {
			if _, err := c.Extend(hs[i:min(i+2000, len(hs))]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkMedianTime computes the median time past of one height, as
// every header's check does.
func BenchmarkMedianTime(b *testing.B) {
	hs := mainnetHeaders(b)
	c := New(&chaincfg.MainNetParams)
	if _, err := c.Extend(hs[1:2001]); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		medianTime(&c.span, 2000)
	}
}
