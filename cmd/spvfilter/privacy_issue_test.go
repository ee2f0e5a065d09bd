package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// writeCapture writes capture records, one JSON line each.
func writeCapture(t *testing.T, file string, recs ...capture.Record) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyzeCaptureTwoClientsOneHost: two wallets connect from one IP on
// two ports. Intersecting their filters (what analyze --capture did) finds
// nothing; each session alone exposes its wallet, and --client HOST:PORT
// separates them.
func TestAnalyzeCaptureTwoClientsOneHost(t *testing.T) {
	dir := t.TempDir()
	wa, wb := model.NewWallet(101, 5), model.NewWallet(202, 5)
	addrA, addrB := wa.Addresses(&chaincfg.MainNetParams), wb.Addresses(&chaincfg.MainNetParams)
	var u strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&u, "%040x\n", i*7919+3)
	}
	u.WriteString(addrA[0] + "\n" + addrB[0] + "\n")
	universe := filepath.Join(dir, "u.txt")
	os.WriteFile(universe, []byte(u.String()), 0o644)
	now := time.Unix(1_700_000_000, 0)
	ra, err := capture.NewFilterLoadRecord(now, "127.0.0.1:40001", "run-1", wa.Filter(0.0001, 10, 1).MsgFilterLoad())
	if err != nil {
		t.Fatal(err)
	}
	rb, err := capture.NewFilterLoadRecord(now, "127.0.0.1:40002", "run-2", wb.Filter(0.0001, 10, 2).MsgFilterLoad())
	if err != nil {
		t.Fatal(err)
	}
	captureFile := filepath.Join(dir, "c.jsonl")
	writeCapture(t, captureFile, ra, rb)

	var out struct {
		Clients []struct {
			Session string `json:"session"`
			Client  string `json:"client"`
			attack.Report
		} `json:"clients"`
		Intersection *attack.Report `json:"intersection"`
	}
	stdout, stderr, status := runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 2 || out.Intersection != nil {
		t.Fatalf("%d sessions, intersection %v: want 2 sessions analyzed apart", len(out.Clients), out.Intersection)
	}
	for i, want := range []string{addrA[0], addrB[0]} {
		c := out.Clients[i]
		if c.MatchedCount != 1 || c.Matched[0].Candidate != want || c.Matched[0].Probability < 0.95 {
			t.Errorf("session %s (%s): matched %+v, want %s exposed", c.Session, c.Client, c.Matched, want)
		}
	}
	stdout, stderr, status = runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--intersect", "--json")
	if status != exitOK {
		t.Fatalf("--intersect: status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &out)
	var joined struct {
		Intersection struct {
			Sessions []string `json:"sessions"`
		} `json:"intersection"`
	}
	decodeJSON(t, stdout, &joined)
	// With --json the intersection names the sessions it joins, and
	// standard error holds no text ("--intersect joins 2 sessions as one
	// wallet's: run-1, run-2" before).
	if out.Intersection == nil || out.Intersection.MatchedCount != 0 || strings.Join(joined.Intersection.Sessions, ", ") != "run-1, run-2" || stderr != "" {
		t.Errorf("--intersect: %+v, sessions %q, stderr %q", out.Intersection, joined.Intersection.Sessions, stderr)
	}
	stdout, stderr, status = runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--client", "127.0.0.1:40002", "--json")
	if status != exitOK {
		t.Fatalf("--client: status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 1 || out.Clients[0].Session != "run-2" {
		t.Errorf("--client HOST:PORT kept %d sessions", len(out.Clients))
	}
	// Records of the older form (bit array and parameters, no session)
	// still read, each client address its own session.
	old := fmt.Sprintf(`{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterload","filter":"%x","hash_funcs":%d,"tweak":1,"flags":2}`,
		wa.Filter(0.0001, 10, 1).Bits(), wa.Filter(0.0001, 10, 1).HashFuncs())
	os.WriteFile(captureFile, []byte(old+"\n"), 0o644)
	stdout, stderr, status = runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--json")
	if status != exitOK {
		t.Fatalf("old records: status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 1 || out.Clients[0].Session != "127.0.0.1:5" || out.Clients[0].MatchedCount != 1 {
		t.Errorf("old records: %+v", out.Clients)
	}
}

// TestAnalyzeUniverseRobust: a bad line at the end of a universe is skipped
// and reported, not fatal after all the work; 0x and CRLF are accepted; an
// empty universe is bad input.
func TestAnalyzeUniverseRobust(t *testing.T) {
	dir := t.TempDir()
	w := model.NewWallet(7, 3)
	addr := w.Addresses(&chaincfg.MainNetParams)[0]
	filterHex := filterPayloadHex(t, w.Filter(0.0001, 10, 9))
	var u strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&u, "0x%040x\r\n", i*104729+11)
	}
	u.WriteString(addr + "\r\n")
	for i := 0; i < 12; i++ {
		u.WriteString("not-a-candidate!\n")
	}
	universe := filepath.Join(dir, "u.txt")
	os.WriteFile(universe, []byte(u.String()), 0o644)

	stdout, stderr, status := runCLI(t, "", "privacy", "analyze", "--filter", filterHex, "--universe", universe, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var r attack.Report
	decodeJSON(t, stdout, &r)
	if r.UniverseSize != 20001 || r.Universe.LinesRead != 20013 || r.Universe.LinesSkipped != 12 || r.Universe.CandidatesTested != 20001 {
		t.Fatalf("universe %d, scan %+v", r.UniverseSize, r.Universe)
	}
	if len(r.Universe.BadLines) != 10 || r.Universe.BadLines[0].Line != 20002 || r.Universe.BadLines[9].Line != 20011 {
		t.Errorf("bad lines %+v, want lines 20002 to 20011", r.Universe.BadLines)
	}
	if r.MatchedCount < 1 || !strings.Contains(strings.Join(r.Warnings, "\n"), "12 of 20013 universe lines skipped") || stderr != "" {
		t.Errorf("matched %d, warnings %q, stderr %q", r.MatchedCount, r.Warnings, stderr)
	}
	text, _, status := runCLI(t, "", "privacy", "analyze", "--filter", filterHex, "--universe", universe)
	if status != exitOK || !strings.Contains(text, "lines: 20013 read, 12 skipped (not candidates), 20001 candidates tested") ||
		!strings.Contains(text, "skipped line 20002: ") || !strings.Contains(text, "and 2 more") {
		t.Errorf("text report, status %d:\n%.2000s", status, text)
	}
	_, stderr, status = runCLI(t, "", "privacy", "analyze", "--filter", filterHex, "--universe", universe, "--strict")
	if status != exitBadInput || !strings.Contains(stderr, "line 20002") {
		t.Errorf("--strict: status %d, stderr %q", status, stderr)
	}
	for _, in := range []string{"", "# nothing\r\n\r\n", "zz\n"} {
		stdout, stderr, status := runCLI(t, in, "privacy", "analyze", "--filter", filterHex, "--universe", "-")
		if status != exitBadInput || stdout != "" || !strings.Contains(stderr, "no candidate") {
			t.Errorf("universe %q: status %d, stdout %q, stderr %q: want 2", in, status, stdout, stderr)
		}
	}
}

// TestModelNumbersHold: P_h(N) never exceeds P_h(1), for a universe of
// 10^19 addresses too; a filter that matches everything is warned about;
// impossible counts are bad input.
func TestModelNumbersHold(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "privacy", "model", "--universe-size", "10000000000000000000", "--fprate", "0.5", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var m struct {
		PH1      float64  `json:"p_h_1"`
		PHAll    float64  `json:"p_h_all"`
		Warnings []string `json:"warnings"`
	}
	decodeJSON(t, stdout, &m)
	if m.PHAll > m.PH1 || len(m.Warnings) == 0 || stderr != "" {
		t.Errorf("P_h(1) %g, P_h(N) %g, warnings %q, stderr %q", m.PH1, m.PHAll, m.Warnings, stderr)
	}
	stdout, _, status = runCLI(t, "", "privacy", "model", "--universe-size", "10000000000000000000", "--fprate", "0.001", "--json")
	decodeJSON(t, stdout, &m)
	if status != exitOK || m.PHAll > m.PH1 {
		t.Errorf("fp 0.001: status %d, P_h(1) %g, P_h(N) %g", status, m.PH1, m.PHAll)
	}
	for _, args := range [][]string{
		{"privacy", "model", "--filters", "0"},
		{"privacy", "compare", "--filters", "0"},
		{"privacy", "model", "--monte-carlo", "-1"},
		{"privacy", "model", "--sweep", "filters=0..3"},
		{"demo", "--filters", "0"},
		{"demo", "--keys", "0"},
	} {
		stdout, stderr, status := runCLI(t, "", args...)
		if status != exitBadInput || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q: want 2", args, status, stdout, stderr)
		}
	}
}
