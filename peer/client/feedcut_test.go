package client

import (
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
)

// putWhole puts batch b in f as if it were served whole, each filter's
// hash non-zero.
func putWhole(f *filterFeed, b filterBatch) {
	n := int(b.stop-b.start) + 1
	fed := &fedFilters{hashes: make([]chainhash.Hash, n), sums: make([]peer.PayloadSum, n), checked: make([]bool, n)}
	for i := range fed.hashes {
		fed.hashes[i][0] = 1
	}
	f.put(b, nil, nil, fed, make([][]byte, n))
}

// closed reports whether segment s has all its batches in.
func closed(s *fedSegment) bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// TestFeedCut: a fed batch cut after its first n filters (see
// filterFeed.cut), its first part put and the rest put last, leaves each
// segment waiting until every filter of it is in, and then done, with
// every filter's hash in: whether the cut falls inside a segment, at a
// segment's end, or before the batch's first filter.
func TestFeedCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch int // which of the batches 0..999, 1000..1999, 2000..2000
		n     int
	}{
		{"inside the first segment", 0, 500},
		{"before the batch's first filter", 0, 0},
		{"after its last filter but one", 0, 999},
		{"at the first segment's end", 1, 1},
		{"inside the second segment of a batch spanning two", 1, 600},
		{"at the start of the second segment's last batch", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&Client{}).newFilterFeed(nil)
			f.segs[0], f.segs[1] = newFedSegment(0), newFedSegment(1)
			bs := f.batches(0, 1, 1)
			if want := []filterBatch{{0, 999}, {1000, 1999}, {2000, 2000}}; !slices.Equal(bs, want) {
				t.Fatalf("batches %v, want %v", bs, want)
			}
			b := bs[tc.batch]
			done, rest := f.cut(b, tc.n)
			if done.start != b.start || rest.stop != b.stop || rest.start != done.stop+1 || int(done.stop-done.start)+1 != tc.n {
				t.Fatalf("%v cut after %d filters: %v and %v", b, tc.n, done, rest)
			}
			for i, o := range bs {
				if i != tc.batch {
					putWhole(f, o)
				}
			}
			if tc.n > 0 {
				putWhole(f, done)
			}
			for j, s := range f.segs {
				waits := s.start <= rest.stop && rest.start <= s.end
				if closed(s) == waits {
					t.Errorf("segment %d done %v with %v still to come", j, closed(s), rest)
				}
			}
			putWhole(f, rest)
			for j, s := range f.segs {
				if !closed(s) {
					t.Errorf("segment %d not done with every batch in", j)
				}
				if i := slices.Index(s.hashes, chainhash.Hash{}); i >= 0 {
					t.Errorf("segment %d done without the filter of height %d", j, s.start+int32(i))
				}
			}
		})
	}
}
