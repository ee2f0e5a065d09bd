package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestTargetValueSide: a target's value is printed with the digits that
// put it on its side of the bound: a miss never reads as a value that
// meets the target, nor a value that meets it as a miss, in the targets
// list and in the error of --require-targets; counts print whole.
func TestTargetValueSide(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name  string
		want  string
		value float64
		met   *bool
		print string
	}{
		{"a miss just under >= 0.95", ">= 0.95", 0.949996, &no, "0.949996"},
		{"a miss under >= 0.93", ">= 0.93", 0.92996, &no, "0.92996"},
		{"met exactly at the bound", ">= 0.95", 0.95, &yes, "0.95"},
		{"met, far from the bound", ">= 0.95", 0.987654, &yes, "0.9877"},
		{"a miss, far from the bound", ">= 0.95", 0.5, &no, "0.5"},
		{"a miss just above a band", "0.95 ± 0.03", 0.98000049, &no, "0.9800005"},
		{"a miss just under a band", "0.95 ± 0.03", 0.9199996, &no, "0.9199996"},
		{"met inside a band near its end", "0.95 ± 0.03", 0.97996, &yes, "0.98"},
		{"a count", "0", 12345, &no, "12345"},
		{"no verdict", ">= 0.95", 0.949996, nil, "0.95"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.value
			target := simulate.Target{Name: "candidates given P >= 0.95: fraction right", Want: tt.want, Value: &v, Met: tt.met}
			if got := targetValue(target); got != tt.print {
				t.Errorf("targetValue(%v, want %s, met %v) = %q, want %q", tt.value, tt.want, tt.met != nil && *tt.met, got, tt.print)
			}
			var out bytes.Buffer
			printScore(&out, &simulate.Score{Candidates: &simulate.ClaimScore{}, Targets: []simulate.Target{target}}, 0)
			if line := tt.print + " (want " + tt.want + ")"; !strings.Contains(out.String(), line) {
				t.Errorf("targets list:\n%s\nwant it to hold %q", out.String(), line)
			}
			err := missedTargets(&simulate.Score{Targets: []simulate.Target{target}})
			switch {
			case tt.met != nil && !*tt.met && (err == nil || !strings.Contains(err.Error(), ": "+tt.print+" (want")):
				t.Errorf("--require-targets: %v, want it to name %s", err, tt.print)
			case (tt.met == nil || *tt.met) && err != nil:
				t.Errorf("--require-targets: %v for a target not missed", err)
			}
		})
	}
}

// TestEvaluateReportSessions: a report whose "clients" names no session
// (none listed, not a list, a client that is no object or has no session
// string) is refused naming --report, the file and what is wrong in it,
// not as a report of another simulation; a report of sessions the labels
// do not know still is one.
func TestEvaluateReportSessions(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	runOK(t, smallSimulation("7", sim)...)
	labels := filepath.Join(sim, "labels.json")
	const wantReport = "; want the JSON of privacy analyze --capture or privacy fetches (with --json)"
	tests := []struct {
		name, report string
		stderr       string
	}{
		{"no clients at all", `{"a": 1}`, `: a JSON object without "clients", not a report of privacy analyze or privacy fetches` + wantReport},
		{"no client", `{"clients": []}`, `: its "clients" lists no session` + wantReport},
		{"clients null", `{"clients": null}`, `: its "clients" lists no session` + wantReport},
		{"clients a string", `{"clients": "x"}`, `: field "clients" holds a JSON string where a list is wanted` + wantReport},
		{"clients an object", `{"clients": {"session": "sim1-1"}}`, `: field "clients" holds a JSON object where a list is wanted` + wantReport},
		{"a client without a session", `{"clients": [{"client": "127.0.0.1:5"}]}`, `: client 1 of "clients" has no "session"` + wantReport},
		{"a session a number", `{"clients": [{"session": "sim1-1"}, {"session": 5}]}`, `: client 2 of "clients": field "session" holds a JSON number where a string is wanted` + wantReport},
		{"a client a number", `{"clients": [{"session": "sim1-1"}, 7]}`, `: client 2 of "clients": it holds a JSON number where an object is wanted` + wantReport},
		{"sessions of another simulation", `{"clients": [{"session": "elsewhere-1"}]}`, `: none of its 1 sessions is in the labels (first: "elsewhere-1"): labels of another simulation?`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(dir, fmt.Sprintf("report-%d.json", i))
			if err := os.WriteFile(report, []byte(tt.report+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr, status := runCLI(t, "", "privacy", "evaluate", "--labels", labels, "--report", report)
			if want := "spvfilter: --report " + report + tt.stderr + "\n"; status != exitBadInput || stderr != want {
				t.Errorf("status %d, stderr:\n%s\nwant status %d, stderr:\n%s", status, stderr, exitBadInput, want)
			}
		})
	}
}

// TestPrivacyEvaluateOtherSimulation: the reports of a simulation scored
// against the labels of another of the same seed, and so of the same
// session IDs, but of another regime, are refused naming both files
// (before, they were scored: "0 right"), or, a report of fetches, whose
// sessions may fetch none of a wallet's blocks (a real client that kept
// them), scored with a warning that asks whether the labels are of
// another simulation; against their own labels they are scored without
// it.
func TestPrivacyEvaluateOtherSimulation(t *testing.T) {
	dir := t.TempDir()
	own, other := filepath.Join(dir, "own"), filepath.Join(dir, "other")
	runOK(t, smallSimulation("7", own)...)
	runOK(t, append(smallSimulation("7", other), "--regime", "payments")...)
	analyze := filepath.Join(dir, "analyze.json")
	fetches := filepath.Join(dir, "fetches.json")
	for file, args := range map[string][]string{
		analyze: {"privacy", "analyze", "--capture", filepath.Join(own, simulate.CaptureFile), "--universe", filepath.Join(own, simulate.UniverseFile), "--json"},
		fetches: {"privacy", "fetches", "--capture", filepath.Join(own, simulate.FetchCaptureFile), "--index", filepath.Join(own, simulate.IndexFile), "--json"},
	} {
		if err := os.WriteFile(file, []byte(runOK(t, args...)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ownLabels, otherLabels := filepath.Join(own, simulate.LabelsFile), filepath.Join(other, simulate.LabelsFile)
	tests := []struct {
		name, labels, report string
		stderr               string // "": scored
	}{
		{"analyze, its own labels", ownLabels, analyze, ""},
		{"fetches, its own labels", ownLabels, fetches, ""},
		{"analyze, the labels of another regime", otherLabels, analyze, "spvfilter: --report " + analyze + " is not of the simulation of --labels " + otherLabels + ": the filters of "},
		{"fetches, the labels of another regime", otherLabels, fetches, "warned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", "privacy", "evaluate", "--labels", tt.labels, "--report", tt.report)
			if tt.stderr == "" {
				if status != exitOK || strings.Contains(stderr, "another simulation") {
					t.Errorf("status %d, stderr %q: want it scored without a word of another simulation", status, stderr)
				}
				return
			}
			if tt.stderr == "warned" {
				if status != exitOK || !strings.Contains(stderr, "are they the labels of another simulation") {
					t.Errorf("status %d, stderr %q: want it scored with a warning asking whether the labels are of another simulation", status, stderr)
				}
				return
			}
			if status != exitBadInput || !strings.HasPrefix(stderr, tt.stderr) || !strings.Contains(stderr, "are they the labels of another simulation") {
				t.Errorf("status %d, stderr %q: want %d and %q", status, stderr, exitBadInput, tt.stderr)
			}
		})
	}
}
