package leak

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestReportNothingScanned: a report of a session that scanned
// nothing has no scanned range: null in JSON, not -1.
func TestReportNothingScanned(t *testing.T) {
	r := emptyReport(100, 64, DefaultMaxMatches)
	r.measure(0)
	if r.ScannedFrom != nil || r.ScannedTo != nil {
		t.Fatalf("scanned %v..%v", r.ScannedFrom, r.ScannedTo)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"scanned_from":null,"scanned_to":null`)) {
		t.Fatalf("JSON %s", b)
	}
	bitSet(r.scanned, 3)
	bitSet(r.scanned, 9)
	r.measure(0)
	if r.ScannedFrom == nil || *r.ScannedFrom != 103 || *r.ScannedTo != 109 || r.ScannedBlocks != 2 {
		t.Fatalf("scanned %v..%v, %d blocks", r.ScannedFrom, r.ScannedTo, r.ScannedBlocks)
	}
}
