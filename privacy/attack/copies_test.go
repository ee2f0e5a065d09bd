package attack

import (
	"errors"
	"testing"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// TestCountCopies: groups are copies only when every filter is the same
// in every field (bits, hash functions, tweak, flags) and in the same
// order.
func TestCountCopies(t *testing.T) {
	bits := []byte{0x5a, 0x01, 0xff}
	filter := func(bits []byte, funcs, tweak uint32, flags wire.BloomUpdateType) *bip37.Filter {
		t.Helper()
		f, err := bip37.NewFilterFromParams(bits, funcs, tweak, flags)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := filter(bits, 3, 7, wire.BloomUpdateNone)
	other := filter([]byte{0x5a, 0x01, 0xfe}, 3, 7, wire.BloomUpdateNone)
	tests := []struct {
		name   string
		groups [][]*bip37.Filter
		want   []int
	}{
		{"the same filter", [][]*bip37.Filter{{base}, {filter(bits, 3, 7, wire.BloomUpdateNone)}}, []int{2, 2}},
		{"another tweak", [][]*bip37.Filter{{base}, {filter(bits, 3, 8, wire.BloomUpdateNone)}}, []int{1, 1}},
		{"other hash functions", [][]*bip37.Filter{{base}, {filter(bits, 4, 7, wire.BloomUpdateNone)}}, []int{1, 1}},
		{"other flags", [][]*bip37.Filter{{base}, {filter(bits, 3, 7, wire.BloomUpdateAll)}}, []int{1, 1}},
		{"other bits", [][]*bip37.Filter{{base}, {other}}, []int{1, 1}},
		{"bits one byte longer", [][]*bip37.Filter{{base}, {filter(append(bits[:3:3], 0), 3, 7, wire.BloomUpdateNone)}}, []int{1, 1}},
		{"two filters, the same order", [][]*bip37.Filter{{base, other}, {base, other}, {other, base}}, []int{2, 2, 1}},
		{"one filter against two", [][]*bip37.Filter{{base}, {base, base}}, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := countCopies(tt.groups)
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Fatalf("copies %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestJoinRefusesIntersections: an accumulator whose last groups are a
// capture report's intersections (fitOnly) is refused by Join, which
// would make them sessions of the joined priors' fit again.
func TestJoinRefusesIntersections(t *testing.T) {
	groups, univ := sessionsCapture(3, 6, craftedUniverse)
	acc, _ := accumulate(t, groups, univ, AnalyzeOptions{})
	if _, err := Join(acc, acc); err != nil {
		t.Fatalf("sessions alone: %v", err)
	}
	acc.fitOnly(len(groups) - 1)
	if _, err := Join(acc); !errors.Is(err, ErrMismatch) {
		t.Fatalf("joined an accumulator of intersections: error %v, want ErrMismatch", err)
	}
}
