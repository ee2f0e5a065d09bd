package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPrivacyFetchesReasonsSaidOnce: the text report says each kind of
// group reason whole once, not once per group, and each group line names
// its reason by letter with the numbers its reason in --json gives.
func TestPrivacyFetchesReasonsSaidOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	runOK(t, "privacy", "simulate", "--seed", "3", "--wallets", "0", "--noise", "0", "--degenerate", "0",
		"--blocks", "200", "--txs-per-block", "3", "--fetch-wallets", "8", "--out", dir)
	base := []string{"privacy", "fetches", "--capture", filepath.Join(dir, "fetch-capture.jsonl"), "--index", filepath.Join(dir, "chain.idx")}
	type report struct {
		Groups []struct {
			Reason string `json:"reason"`
		} `json:"groups"`
	}
	groupLine := regexp.MustCompile(`(?m)^  group \d+ \(k = \d+\): .*that one is the wallet's: reason ([A-Z]+)(?: \(([^)]*)\))?$`)
	for _, row := range []struct {
		name  string
		flags []string
		show  int
	}{
		{"every session", nil, 20},
		{"two groups a session", []string{"--show", "2"}, 2},
		{"a session and its intersection", []string{"--client", "127.1.0.1", "--intersect"}, 20},
	} {
		flags, show := row.flags, row.show
		t.Run(row.name, func(t *testing.T) {
			var out struct {
				Clients      []report `json:"clients"`
				Intersection *report  `json:"intersection"`
			}
			decodeJSON(t, runOK(t, append(append(base, flags...), "--json")...), &out)
			reps := out.Clients
			if out.Intersection != nil {
				reps = append(reps, *out.Intersection)
			}
			var printed []string // the reasons of the groups the text prints, in order
			kinds := map[string]bool{}
			for _, r := range reps {
				for _, g := range r.Groups[:min(show, len(r.Groups))] {
					printed = append(printed, g.Reason)
					template, _ := numberSlots(g.Reason)
					kinds[template] = true
				}
			}
			text := runOK(t, append(base, flags...)...)
			lines := groupLine.FindAllStringSubmatch(text, -1)
			if len(printed) < 2 || len(lines) != len(printed) {
				t.Fatalf("%d group lines, %d groups printed in --json", len(lines), len(printed))
			}
			if n := strings.Count(text, "downloads cannot tell them apart"); n != len(kinds) || len(kinds) >= len(printed) {
				t.Errorf("the reasons said %d times, %d kinds among %d groups", n, len(kinds), len(printed))
			}
			for i, m := range lines {
				_, nums := numberSlots(printed[i])
				var want []string
				for k, n := range nums {
					want = append(want, fmt.Sprintf("#%d = %s", k+1, n))
				}
				if m[2] != strings.Join(want, ", ") {
					t.Errorf("group line %q: numbers %q, its reason %q", m[0], m[2], printed[i])
				}
			}
		})
	}
}
