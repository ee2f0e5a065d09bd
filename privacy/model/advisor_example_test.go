package model_test

import (
	"fmt"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// What a wallet of 20 addresses must pay so that a node testing ten million
// addresses cannot name all of them with better than even odds, with one
// filter and after three filters with different tweaks.
func ExampleAdvise() {
	a, err := model.Advise(model.AdviceParams{
		Model: model.Params{
			Addresses: 20, UniverseSize: 10_000_000,
			ElementsPerAddress: 2, ExtraElements: 100, Filters: 3,
		},
		TargetPHAll: 0.5,
	})
	if err != nil {
		panic(err)
	}
	for _, r := range a.Rows {
		fmt.Printf("%d filter(s): rate >= %.3g, %d bytes, %d hash functions, E[P_h(N)] = %.3f, %.3g false-positive txs per block\n",
			r.Filters, r.FPRate, r.FilterBytes, r.HashFuncs, r.PHAllExact, r.FalsePositiveTxsPerBlock)
	}
	// Output:
	// 1 filter(s): rate >= 0.000862, 256 bytes, 9 hash functions, E[P_h(N)] = 0.496, 0.00199 false-positive txs per block
	// 3 filter(s): rate >= 0.0893, 87 bytes, 2 hash functions, E[P_h(N)] = 0.000, 304 false-positive txs per block
}
