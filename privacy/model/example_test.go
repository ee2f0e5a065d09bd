package model_test

import (
	"fmt"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// The model for a wallet of 20 addresses whose filter a node tests against
// ten million addresses, with one filter and with two (a restart).
func ExampleEvaluate() {
	r, err := model.Evaluate(model.Params{
		Addresses: 20, FPRate: 0.0005, UniverseSize: 10_000_000,
		ElementsPerAddress: 2, ExtraElements: 100, Filters: 2,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("filter: %d bytes, %d hash functions\n", r.FilterBytes, r.HashFuncs)
	for _, s := range r.Steps {
		fmt.Printf("after filter %d: S = %.3g, P_h(1) = %.3f\n", s.Filters, s.ExpectedFalsePositives, s.PH1)
	}
	// Output:
	// filter: 276 bytes, 10 hash functions
	// after filter 1: S = 0.156, P_h(1) = 0.992
	// after filter 2: S = 2.44e-09, P_h(1) = 1.000
}

// Gervais et al.'s fresh wallet of 15 addresses (one filter at 0.05%, sized
// for 100 elements more) against a universe of 3.2·10^7 addresses, the one
// that reproduces their quoted P_h(15) ≈ 0.80: the chance that j matching
// addresses picked at random are all the wallet's, at the expected false
// positives and averaged over their number.
func ExampleResult_PHCurve() {
	r, err := model.Evaluate(model.Params{
		Addresses: 15, FPRate: 0.0005, UniverseSize: 32_000_000,
		ElementsPerAddress: 2, ExtraElements: 100,
	})
	if err != nil {
		panic(err)
	}
	for _, p := range r.PHCurve(1) {
		if p.J%5 == 0 || p.J == 1 {
			fmt.Printf("P_h(%d) = %.4f, E[P_h(%d)] = %.4f\n", p.J, p.PH, p.J, p.PHExact)
		}
	}
	// Output:
	// P_h(1) = 0.9955, E[P_h(1)] = 0.9958
	// P_h(5) = 0.9739, E[P_h(5)] = 0.9789
	// P_h(10) = 0.9321, E[P_h(10)] = 0.9583
	// P_h(15) = 0.8002, E[P_h(15)] = 0.9380
}
