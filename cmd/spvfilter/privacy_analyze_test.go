package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestAnalyzeLinkIntervals: three sessions, alice's wallet of 12
// addresses twice and bob's once, over 20,000 candidates. --link --json
// links alice's two sessions alone and gives every estimate its 95%
// interval; the text prints the intervals and the estimated prior.
func TestAnalyzeLinkIntervals(t *testing.T) {
	dir := t.TempDir()
	alice, bob := model.NewWallet(301, 12), model.NewWallet(302, 12)
	var u strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&u, "%040x\n", i*7919+17)
	}
	for _, a := range append(alice.Addresses(&chaincfg.MainNetParams), bob.Addresses(&chaincfg.MainNetParams)...) {
		u.WriteString(a + "\n")
	}
	universe := filepath.Join(dir, "u.txt")
	if err := os.WriteFile(universe, []byte(u.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	var recs []capture.Record
	for i, w := range []*model.Wallet{alice, bob, alice} {
		r, err := capture.NewFilterLoadRecord(now, fmt.Sprintf("127.0.0.1:%d", 40001+i), fmt.Sprintf("s-%d", i+1), w.Filter(0.002, 10, uint32(7+i)).MsgFilterLoad())
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	captureFile := filepath.Join(dir, "c.jsonl")
	writeCapture(t, captureFile, recs...)
	stdout, stderr, status := runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--link", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Clients []struct {
			Session         string  `json:"session"`
			EstimatedWallet float64 `json:"estimated_wallet"`
			Low             float64 `json:"estimated_wallet_low"`
			High            float64 `json:"estimated_wallet_high"`
			Matched         []struct {
				Probability float64 `json:"probability"`
				Low         float64 `json:"probability_low"`
				High        float64 `json:"probability_high"`
			} `json:"matched"`
		} `json:"clients"`
		Links struct {
			Prior       float64        `json:"prior"`
			PriorLow    float64        `json:"prior_low"`
			PriorHigh   float64        `json:"prior_high"`
			WalletSizes map[string]any `json:"wallet_size_prior"`
			Pairs       []struct {
				A, B        string
				Third       string  `json:"third"`
				Probability float64 `json:"probability"`
				Low         float64 `json:"probability_low"`
				High        float64 `json:"probability_high"`
				Shared      float64 `json:"probability_shared_addresses"`
				Linked      bool    `json:"linked"`
			} `json:"pairs"`
			Groups []struct {
				Sessions []string `json:"sessions"`
				Low      float64  `json:"estimated_wallet_low"`
				High     float64  `json:"estimated_wallet_high"`
			} `json:"groups"`
		} `json:"link_report"`
	}
	decodeJSON(t, stdout, &out)
	for _, c := range out.Clients {
		if c.Low > c.EstimatedWallet || c.High < c.EstimatedWallet || c.High < 12 || c.Low > 12 {
			t.Errorf("session %s: wallet %g in %g..%g, the truth 12", c.Session, c.EstimatedWallet, c.Low, c.High)
		}
		for _, m := range c.Matched {
			if m.Low > m.Probability || m.High < m.Probability {
				t.Errorf("session %s: match probability %g outside %g..%g", c.Session, m.Probability, m.Low, m.High)
			}
		}
	}
	l := out.Links
	if !(l.PriorLow <= l.Prior && l.Prior <= l.PriorHigh && l.Prior > 0) || l.WalletSizes["median"] == nil {
		t.Errorf("prior %g (%g..%g), wallet sizes %v", l.Prior, l.PriorLow, l.PriorHigh, l.WalletSizes)
	}
	if len(l.Pairs) != 3 {
		t.Fatalf("%d pairs, want 3", len(l.Pairs))
	}
	for _, p := range l.Pairs {
		same := p.A == "s-1" && p.B == "s-3"
		if p.Linked != same || p.Low > p.Probability || p.High < p.Probability || same && p.Probability < 0.95 {
			t.Errorf("pair %s-%s: probability %g (%g..%g), shared addresses %g, linked %v; want linked %v", p.A, p.B, p.Probability, p.Low, p.High, p.Shared, p.Linked, same)
		}
	}
	if len(l.Groups) != 1 || strings.Join(l.Groups[0].Sessions, ",") != "s-1,s-3" || l.Groups[0].Low > 12 || l.Groups[0].High < 12 {
		t.Errorf("groups %+v, want alice's two sessions with her 12 addresses", l.Groups)
	}
	text, _, status := runCLI(t, "", "privacy", "analyze", "--capture", captureFile, "--universe", universe, "--link")
	for _, want := range []string{"95% interval", "prior", "P(shared addresses)", "wallet sizes", "linked group of 2 sessions"} {
		if status != exitOK || !strings.Contains(text, want) {
			t.Errorf("text report, status %d, lacks %q:\n%s", status, want, text)
		}
	}
}
