package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPrivacyModelPHj: the model's JSON holds P_h(j) for every j, whose
// ends are P_h(1) and P_h(N); the text prints every j of a small wallet;
// --plot-j draws the curves of one model or of a sweep, and refuses what
// it cannot draw.
func TestPrivacyModelPHj(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "privacy", "model", "--addresses", "15", "--universe-size", "32000000", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var m struct {
		PH1        float64 `json:"p_h_1"`
		PHAll      float64 `json:"p_h_all"`
		PH1Exact   float64 `json:"p_h_1_exact"`
		PHAllExact float64 `json:"p_h_all_exact"`
		PHj        []struct {
			J       uint32  `json:"j"`
			PH      float64 `json:"p_h"`
			PHExact float64 `json:"p_h_exact"`
		} `json:"p_h_j"`
	}
	decodeJSON(t, stdout, &m)
	if len(m.PHj) != 15 || m.PHj[0].J != 1 || m.PHj[14].J != 15 || m.PHj[0].PH != m.PH1 || m.PHj[14].PH != m.PHAll ||
		m.PHj[0].PHExact != m.PH1Exact || m.PHj[14].PHExact != m.PHAllExact {
		t.Fatalf("p_h_j %+v against %+v", m.PHj, m)
	}
	// Gervais et al.'s N = 15 point at the universe that reproduces it.
	if m.PHAll < 0.795 || m.PHAll > 0.805 {
		t.Errorf("P_h(15) = %v at 3.2e7 addresses", m.PHAll)
	}
	text, _, _ := runCLI(t, "", "privacy", "model", "--addresses", "15", "--universe-size", "32000000")
	if !strings.Contains(text, "P_h(j): j matching addresses") || !regexp.MustCompile(`\n +15 +0\.8002 +0\.938\n`).MatchString(text) || strings.Contains(text, "a selection of j") {
		t.Errorf("text:\n%s", text)
	}
	text, _, _ = runCLI(t, "", "privacy", "model", "--addresses", "300")
	if !strings.Contains(text, "a selection of j") || !regexp.MustCompile(`\n +150 `).MatchString(text) || regexp.MustCompile(`\n +149 `).MatchString(text) {
		t.Errorf("text of a large wallet:\n%s", text)
	}

	dir := t.TempDir()
	for _, args := range [][]string{
		{"--addresses", "50", "--filters", "3", "--fprate", "0.01", "--plot-j", filepath.Join(dir, "one.png")},
		{"--sweep", "addresses=5,10,15,20", "--universe-size", "32000000", "--plot-j", filepath.Join(dir, "gervais.svg"), "--json"},
	} {
		stdout, stderr, status := runCLI(t, "", append([]string{"privacy", "model"}, args...)...)
		file := args[len(args)-1]
		if file == "--json" {
			file = args[len(args)-2]
		}
		if status != exitOK || !strings.Contains(stdout, file) {
			t.Fatalf("%q: status %d, %s\n%s", args, status, stderr, stdout)
		}
		if b, err := os.ReadFile(file); err != nil || len(b) < 1000 {
			t.Errorf("%s: %v, %d bytes", file, err, len(b))
		}
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--plot-j", filepath.Join(dir, "x.pdf")}, ".svg or .png"},
		{[]string{"--sweep", "addresses=1..30", "--plot-j", filepath.Join(dir, "x.svg")}, "at most 20"},
		{[]string{"--target-p-h-1", "0.5", "--plot-j", filepath.Join(dir, "x.svg")}, "--plot-j cannot be combined"},
	} {
		_, stderr, status := runCLI(t, "", append([]string{"privacy", "model"}, tc.args...)...)
		if status != exitBadInput || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q: status %d, %s", tc.args, status, stderr)
		}
	}
}
