package simulate_test

import (
	"encoding/json"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// BenchmarkEvaluateFetches: evaluate on the fetches report of a mixed
// regime's seed as TestFetchCalibrationMixed scores it, beside one
// decoding of the same report by encoding/json into any (the anchor:
// what reading it once costs), in one run:
//
//	go test ./privacy/simulate -run XXX -bench EvaluateFetches -benchmem
func BenchmarkEvaluateFetches(b *testing.B) {
	sc, fcapt, index := generateFetch(b, fetchOptions(b, simulate.RegimeMixed, 7901, 2))
	reps := fetchReports(b, fcapt, index, attack.FetchOptions{})
	doc := fetchesDoc(b, reps)
	b.Logf("report of %d sessions, %d bytes", len(reps), len(doc))
	b.Run("evaluate", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := simulate.Evaluate(sc.Labels, doc, simulate.EvalOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-any", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
