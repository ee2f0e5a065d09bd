package capture

import (
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// TestSessionsFoldGrownReload checks that a filterload holding every bit
// of its connection's current filter, with the same parameters, replaces
// it (the wallet's filter grew), and that any other filterload starts a
// filter of its own.
func TestSessionsFoldGrownReload(t *testing.T) {
	build := func(tweak uint32, elems uint32, items ...string) *wire.MsgFilterLoad {
		f := bip37.NewFilter(elems, 0.001, tweak, wire.BloomUpdateNone)
		for _, it := range items {
			f.Add([]byte(it))
		}
		return f.MsgFilterLoad()
	}
	tests := []struct {
		name string
		next *wire.MsgFilterLoad
		// want is the number of filters of the session, grown whether
		// the second filterload was folded into the first.
		want  int
		grown bool
	}{
		{"grown", build(7, 100, "a", "b", "c"), 1, true},
		{"the same again", build(7, 100, "a", "b"), 1, true},
		{"another tweak", build(8, 100, "a", "b", "c"), 2, false},
		{"another size", build(7, 1000, "a", "b", "c"), 2, false},
		{"an element dropped", build(7, 100, "a", "c"), 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1700000000, 0)
			first, err := NewFilterLoadRecord(now, "127.0.0.1:1", "s1", build(7, 100, "a", "b"))
			if err != nil {
				t.Fatal(err)
			}
			second, err := NewFilterLoadRecord(now.Add(time.Second), "127.0.0.1:1", "s1", tt.next)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := Sessions([]Record{first, second})
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != 1 {
				t.Fatalf("got %d sessions, want 1", len(ss))
			}
			if len(ss[0].Filters) != tt.want {
				t.Fatalf("the session has %d filters, want %d", len(ss[0].Filters), tt.want)
			}
			f := ss[0].Filters[0]
			if tt.grown != slices.Equal(f.Grown, []int{2}) {
				t.Fatalf("Grown = %v, want the second record listed: %v", f.Grown, tt.grown)
			}
			if tt.grown && !slices.Equal(f.Filter.Bits(), bip37FromMsg(t, tt.next).Bits()) {
				t.Fatal("the session's filter is not the one it grew into")
			}
			if f.Record != 1 {
				t.Fatalf("the filter's record is %d, want the first load's, 1", f.Record)
			}
		})
	}
}

// bip37FromMsg is the filter a filterload loads.
func bip37FromMsg(t *testing.T, m *wire.MsgFilterLoad) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilterFromParams(m.Filter, m.HashFuncs, m.Tweak, m.Flags)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
