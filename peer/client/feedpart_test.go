package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestFeedPart checks the requests filterFeed.part makes of a fed batch:
// a peer whose filter size is unknown asks as many as fit what it may
// still serve unchecked at the largest size, one of known size the rest
// of the batch when its filters fit that room (a quarter over), and a
// batch whose segments' filter hashes are in is asked whole.
func TestFeedPart(t *testing.T) {
	m := &pool.Member{}
	for _, tc := range []struct {
		name      string
		b         filterBatch
		size      int64 // m's last filters' mean size, 0 if unknown
		unchecked int64 // what m served unchecked already
		want      bool  // the segment's filter hashes are in
		stop      int32
	}{
		{"first request", filterBatch{0, 999}, 0, 0, false, fatSegmentBytes/wire.MaxCFilterDataSize - 1},
		{"first request of a short batch", filterBatch{0, 9}, 0, 0, false, 9},
		{"first request, half the room served", filterBatch{100, 999}, 0, fatSegmentBytes / 2, false, 100 + fatSegmentBytes/2/wire.MaxCFilterDataSize - 1},
		{"first request, no room", filterBatch{100, 999}, 0, fatSegmentBytes + 1, false, 100},
		{"small filters", filterBatch{16, 999}, 100, 0, false, 999},
		{"filters that fit a quarter over", filterBatch{16, 999}, fatSegmentBytes * 4 / 5 / 984, 0, false, 999},
		{"hashes in", filterBatch{0, 999}, 0, 0, true, 999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&Client{}).newFilterFeed(nil)
			s := newFedSegment(0)
			if tc.want {
				s.want = make([]chainhash.Hash, s.end-s.start+1)
			}
			f.segs[0] = s
			f.unchecked[m], f.sizes[m] = tc.unchecked, tc.size
			stop, err := f.part(context.Background(), m, tc.b)
			if err != nil || stop != tc.stop {
				t.Errorf("part(%d..%d) = %d, %v; want %d", tc.b.start, tc.b.stop, stop, err, tc.stop)
			}
		})
	}
}

// TestFeedPartWaitsForAsking has a peer whose filters would pass
// fatSegmentBytes find another peer asking the segment's filter hashes:
// it must wait for that answer rather than ask them again, and go on
// with them once they are in.
func TestFeedPartWaitsForAsking(t *testing.T) {
	m := &pool.Member{}
	f := (&Client{}).newFilterFeed(nil)
	s := newFedSegment(0)
	s.asking = make(chan struct{})
	f.segs[0] = s
	f.sizes[m] = 20 << 10
	done := make(chan error, 1)
	go func() {
		_, err := f.part(context.Background(), m, filterBatch{16, 999})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("part returned (%v) while another peer was asking the segment's filter hashes", err)
	case <-time.After(50 * time.Millisecond):
	}
	f.mu.Lock()
	s.want = make([]chainhash.Hash, s.end-s.start+1)
	close(s.asking)
	s.asking = nil
	f.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("part still waits after the filter hashes came in")
	}
}
