package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLabTimingZeroSaysWhatIsTimed: with --timing 0 the builds are not
// timed and each watch list is timed over one pass, as --timing's help
// says. Before, the help said "0: no timing", and the watch lists' times
// were printed all the same.
func TestLabTimingZeroSaysWhatIsTimed(t *testing.T) {
	help, _, status := runCLI(t, "", "lab", "--help")
	const said = "(0: builds untimed, each watch list timed over one pass)"
	if status != exitOK || !strings.Contains(oneLine(help), said) {
		t.Errorf("lab --help (status %d) does not say %q", status, said)
	}
	stdout, stderr, status := runCLI(t, "", "lab", "--json", "--vectors", labVectors, "--probes", "0", "--timing", "0s", "--watched", "1", "--wallets", "1")
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	var doc struct {
		Designs []struct {
			Name       string   `json:"name"`
			Variant    string   `json:"variant"`
			Build      *float64 `json:"build_ns_per_element"`
			MatchTimes []struct {
				NsPerBlock *float64 `json:"ns_per_block"`
			} `json:"match_times"`
		} `json:"designs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Designs) == 0 {
		t.Fatalf("%v, %d designs in %.300s", err, len(doc.Designs), stdout)
	}
	for _, d := range doc.Designs {
		if d.Build != nil || len(d.MatchTimes) != 1 || d.MatchTimes[0].NsPerBlock == nil || *d.MatchTimes[0].NsPerBlock <= 0 {
			t.Errorf("%s %s: build %v, match %+v: want no build time and one watch list timed", d.Name, d.Variant, d.Build, d.MatchTimes)
		}
	}
}
