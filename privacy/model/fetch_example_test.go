package model_test

import (
	"fmt"
	"math"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// A wallet fetched 100 of 800,000 blocks; a script seen in 2 blocks, both
// fetched, is explained by chance with probability C(B-2, F-2)/C(B, F).
func ExampleChanceAllFetched() {
	exact := model.ChanceAllFetched(800_000, 100, 2)
	approx := math.Pow(100.0/800_000, 2)
	fmt.Printf("exact %.4g, f^k %.4g; among 10^9 scripts about %.0f by chance\n", exact, approx, 1e9*exact)
	// Output: exact 1.547e-08, f^k 1.562e-08; among 10^9 scripts about 15 by chance
}
