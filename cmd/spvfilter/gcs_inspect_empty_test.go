package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGCSInspectEmptyFilter: an empty basic filter (N=0) matches no query
// item, so gcs inspect gives it no false-positive rate: the text says
// none applies, and --json has false_positive_rate null with null_reason
// saying why. Before, both gave it 1/M = 1.27e-06, as if it matched
// scripts it does not hold. A filter with items keeps its 1/M.
func TestGCSInspectEmptyFilter(t *testing.T) {
	const withItems = "0afbc2920af1b027f31f87b592276eb4c32094bb4d3697021b4c6380" // N=10, gcs inspect's example
	rows := []struct {
		name, filter string
		text         string // a line of the text output
		notText      string // not in the text output
		rate         any    // false_positive_rate with --json: nil for null
		reason       string // in null_reason, "" for none
	}{
		{name: "empty", filter: "00", text: "false-positive rate:  none (an empty filter matches no query item)",
			notText: "1/784931", rate: nil, reason: "the filter is empty (N=0): it matches no query item, so no false-positive rate applies"},
		{name: "ten items", filter: withItems, text: "false-positive rate:  1/784931 = 1.27e-06 per query item",
			notText: "none", rate: 1.0 / 784931},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", "gcs", "inspect", "--filter", r.filter)
			if status != exitOK || !strings.Contains(stdout, r.text+"\n") || strings.Contains(stdout, r.notText) {
				t.Errorf("text: status %d, stdout %q, stderr %q: want %q and no %q", status, stdout, stderr, r.text, r.notText)
			}
			stdout, stderr, status = runCLI(t, "", "gcs", "inspect", "--filter", r.filter, "--json")
			var doc map[string]any
			if status != exitOK || json.Unmarshal([]byte(stdout), &doc) != nil {
				t.Fatalf("--json: status %d, stdout %q, stderr %q", status, stdout, stderr)
			}
			rate, present := doc["false_positive_rate"]
			if !present || rate != r.rate {
				t.Errorf("--json: false_positive_rate = %v (present %t), want %v", rate, present, r.rate)
			}
			reason, _ := doc["null_reason"].(string)
			if r.reason == "" && doc["null_reason"] != nil || r.reason != "" && !strings.Contains(reason, r.reason) {
				t.Errorf("--json: null_reason = %v, want %q", doc["null_reason"], r.reason)
			}
		})
	}
}
