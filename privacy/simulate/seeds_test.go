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
	} {
		got, err := ParseSeeds(c.spec)
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v (ok %v)", c.spec, got, err, c.want, c.ok)
		}
	}
}
