package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestFeedFatVerifyReleasesWant: a fed segment verified keeps
// serving its matches (verifiedAt) for the rest of the scan, but the
// filter hashes asked for it (want, 32 bytes a height) are of no more
// use: once a segment passed fatSegmentBytes every later fed segment
// asks its own, so a scan would otherwise hold 32 bytes more for each fed
// height past the first such segment till it ends (27 MiB for 880,000
// heights), beside the 32 of the filter hashes served (hashes).
func TestFeedFatVerifyReleasesWant(t *testing.T) {
	f := (&Client{}).newFilterFeed(nil)
	s := newFedSegment(3)
	s.want = make([]chainhash.Hash, s.end-s.start+1)
	f.segs[s.j] = s
	f.verify(s)
	if f.verifiedAt(s.start) != s {
		t.Fatal("the verified segment is not served by verifiedAt")
	}
	if s.want != nil {
		t.Errorf("a verified segment holds the %d filter hashes asked for it (%d KiB) till the scan ends", len(s.want), len(s.want)*chainhash.HashSize>>10)
	}
}
