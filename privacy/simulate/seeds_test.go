package simulate

import (
	"slices"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []uint64
		ok   bool
	}{
		{"7", []uint64{7}, true},
		{"801-803", []uint64{801, 802, 803}, true},
		{"2, 5,9-10", []uint64{2, 5, 9, 10}, true},
		{"5-5", []uint64{5}, true},
		{"", nil, false},
		{"9-3", nil, false},
		{"1-x", nil, false},
		{"a", nil, false},
		{"1,,2", nil, false},
		{"0-65536", nil, false},
		{"1-65536", nil, true}, // MaxSeeds, checked by count below
		{"0-18446744073709551615", nil, false},
		{"1-65535,7,8", nil, false},
	} {
		got, err := ParseSeeds(c.spec)
		if c.want == nil && c.ok {
			if err != nil || len(got) != MaxSeeds || got[MaxSeeds-1] != MaxSeeds {
				t.Errorf("ParseSeeds(%q): %d seeds, %v; want %d", c.spec, len(got), err, MaxSeeds)
			}
			continue
		}
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("ParseSeeds(%q) = %d seeds %v, %v; want %v (ok %v)", c.spec, len(got), got[:min(len(got), 8)], err, c.want, c.ok)
		}
	}
}
