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
		fmt.Printf("%d filter(s): S = %.3g, P_h(1) = %.3f\n", s.Filters, s.ExpectedFalsePositives, s.PH1)
	}
	// Output:
	// filter: 276 bytes, 10 hash functions
	// 1 filter(s): S = 0.156, P_h(1) = 0.992
	// 2 filter(s): S = 2.44e-09, P_h(1) = 1.000
}
