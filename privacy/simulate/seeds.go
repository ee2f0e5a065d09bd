package simulate

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSeeds bounds the seeds one list names (see ParseSeeds).
const MaxSeeds = 1 << 16

// ParseSeeds reads a list of seeds as the tests' environment names them:
// comma-separated items, each a seed or a range FROM-TO of seeds (both
// included, FROM no more than TO), as "801-816" or "2,5,9-12". Seeds are
// returned in the order named; a list of more than MaxSeeds is refused.
func ParseSeeds(spec string) ([]uint64, error) {
	var seeds []uint64
	for _, part := range strings.Split(spec, ",") {
		lo, hi, ranged := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, err
		}
		b := a
		if ranged {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("bad range %q", part)
			}
		}
		if b-a >= MaxSeeds-uint64(len(seeds)) {
			return nil, fmt.Errorf("more than %d seeds", MaxSeeds)
		}
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return seeds, nil
}
