package model_test

import (
	"fmt"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// What a wallet of 20 addresses must pay so that a node testing ten million
// addresses cannot name all of them with better than even odds, with one
// filter and after three filters with different tweaks, when the filter is
// sized by Bitcoin Core's rule and by bitcoinj's. The rate to ask for sits
// well inside the interval of rates that build the advised filter.
func ExampleAdvise() {
	for _, rule := range model.SizingRules {
		a, err := model.Advise(model.AdviceParams{
			Model: model.Params{
				Addresses: 20, UniverseSize: 10_000_000,
				ElementsPerAddress: 2, ExtraElements: 100, Filters: 3, Sizing: rule,
			},
			TargetPHAll: 0.5,
		})
		if err != nil {
			panic(err)
		}
		for _, r := range a.Rows {
			fmt.Printf("%s, after filter %d: rate %s (any of [%.4g, %.4g]), %d bytes, %d hash functions, E[P_h(N)] = %.3f, %.3g false-positive txs per block\n",
				rule, r.Filters, r.FPRateText, r.FPRateMin, r.FPRateMax, r.FilterBytes, r.HashFuncs, r.PHAllExact, r.FalsePositiveTxsPerBlock)
		}
	}
	// Output:
	// core, after filter 1: rate 0.00106 (any of [0.001045, 0.001074]), 249 bytes, 9 hash functions, E[P_h(N)] = 0.415, 0.0025 false-positive txs per block
	// core, after filter 3: rate 0.0905 (any of [0.08928, 0.09176]), 87 bytes, 2 hash functions, E[P_h(N)] = 0.000, 304 false-positive txs per block
	// bitcoinj, after filter 1: rate 0.00106 (any of [0.001045, 0.001074]), 249 bytes, 9 hash functions, E[P_h(N)] = 0.415, 0.0025 false-positive txs per block
	// bitcoinj, after filter 3: rate 0.101 (any of [0.09964, 0.1024]), 83 bytes, 3 hash functions, E[P_h(N)] = 0.413, 120 false-positive txs per block
}
