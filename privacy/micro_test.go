package privacy

import (
	"bytes"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

func BenchmarkMicroOne(b *testing.B) {
	data := benchUniverse(1000000)
	f := NewWallet(1, 266).Filter(0.0005, 100, 7)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Analyze([]*bip37.Filter{f}, bytes.NewReader(data), AnalyzeOptions{Workers: 1})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/cand")
}
