package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// writeFetchFixture writes an index of 1000 blocks (a wallet script in
// blocks 10 and 500, 300 other scripts in one block each) and a capture of
// one session that scanned them all and fetched blocks 10, 500 and 700.
func writeFetchFixture(t *testing.T) (capturePath, index string) {
	t.Helper()
	dir := t.TempDir()
	hash := func(h int32) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("b", h))) }
	ix := universe.NewIndexWriter(dir, 0)
	defer ix.Close()
	ix.Add("wallet", 10)
	ix.Add("wallet", 500)
	for i := int32(0); i < 300; i++ {
		ix.Add(fmt.Sprintf("other-%03d", i), i*3)
	}
	index = writeIndexFile(t, dir, ix, 1000, hash)
	var lines []string
	zero := uint32(0)
	ft := uint8(0)
	stop := hash(999)
	for _, rec := range []capture.Record{
		{Client: "127.0.0.1:5", Session: "s-1", Command: capture.CmdGetCFilters, FilterType: &ft, StartHeight: &zero, StopHash: stop.String()},
		{Client: "127.0.0.1:5", Session: "s-1", Command: capture.CmdGetData, Blocks: []capture.BlockRequest{
			{Hash: hash(10).String(), Type: "witness_block"}, {Hash: hash(500).String(), Type: "witness_block"}, {Hash: hash(700).String(), Type: "block"}}},
	} {
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b))
	}
	capturePath = filepath.Join(dir, "c.jsonl")
	os.WriteFile(capturePath, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return capturePath, index
}

// writeIndexFile writes the index of blocks 0..n-1, of the given hashes,
// to a file in dir and returns its path.
func writeIndexFile(t *testing.T, dir string, ix *universe.IndexWriter, n int32, hash func(int32) chainhash.Hash) string {
	t.Helper()
	hd := &universe.IndexHeader{Network: "regtest"}
	for h := range n {
		hd.Hashes = append(hd.Hashes, hash(h))
	}
	index := filepath.Join(dir, "x.idx")
	f, err := os.Create(index)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ix.WriteTo(f, hd); err != nil {
		t.Fatal(err)
	}
	return index
}

func TestPrivacyFetchesCommand(t *testing.T) {
	capture, index := writeFetchFixture(t)
	stdout, stderr, status := runCLI(t, "", "privacy", "fetches", "--capture", capture, "--index", index, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Clients []struct {
			UniverseSize uint64  `json:"universe_size"`
			Expected     float64 `json:"expected_false_positives"`
			Matched      []struct {
				Candidate   string  `json:"candidate"`
				Probability float64 `json:"probability"`
				Chance      float64 `json:"chance_probability"`
			} `json:"matched"`
			Warnings []string `json:"warnings"`
		} `json:"clients"`
		Warnings []string `json:"warnings"`
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 1 || out.Warnings == nil {
		t.Fatalf("%s", stdout)
	}
	c := out.Clients[0]
	// Blocks 10, 500 and 700 fetched of 1000; the other scripts sit at
	// multiples of 3, none of which is fetched: the wallet alone matches.
	if c.UniverseSize != 301 || len(c.Matched) != 1 || c.Matched[0].Candidate != "wallet" {
		t.Fatalf("%+v", c)
	}
	if want := 3.0 * 2 / (1000 * 999); c.Matched[0].Chance < want*0.999999 || c.Matched[0].Chance > want*1.000001 || c.Matched[0].Probability < 0.99 {
		t.Errorf("wallet: chance %g (want %g), probability %g", c.Matched[0].Chance, want, c.Matched[0].Probability)
	}
	if want := 300*0.003 + 3.0*2/(1000*999); c.Expected < want*0.999 || c.Expected > want*1.001 {
		t.Errorf("expected false positives %g, want %g", c.Expected, want)
	}
	text, _, status := runCLI(t, "", "privacy", "fetches", "--capture", capture, "--index", index)
	if status != exitOK || !strings.Contains(text, "wallet") || !strings.Contains(text, "verdict: 1 of 301 candidates") {
		t.Errorf("status %d:\n%s", status, text)
	}
}

func TestPrivacyFetchesBadInput(t *testing.T) {
	capture, index := writeFetchFixture(t)
	dir := t.TempDir()
	filterOnly := filepath.Join(dir, "f.jsonl")
	os.WriteFile(filterOnly, []byte(`{"client":"c","command":"filterload","filterload":"02ff01030000000900000001"}`+"\n"), 0o644)
	notIndex := filepath.Join(dir, "n.idx")
	os.WriteFile(notIndex, []byte("universe line\n"), 0o644)
	data, _ := os.ReadFile(index)
	cut := filepath.Join(dir, "cut.idx")
	os.WriteFile(cut, data[:len(data)-5], 0o644)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(capture, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--capture", filepath.Join(dir, "missing"), "--index", index}, "missing"},
		{[]string{"--capture", dir, "--index", index}, "directory"},
		{[]string{"--capture", filterOnly, "--index", index}, "no block request"},
		{[]string{"--capture", capture, "--index", notIndex}, "not an appearance index"},
		{[]string{"--capture", capture, "--index", cut}, "a damaged appearance index"},
		{[]string{"--capture", capture, "--index", index, "--client", "10.0.0.1"}, "10.0.0.1"},
		{[]string{"--capture", capture, "--index", index, "--max-matches", "0"}, "--max-matches"},
		{[]string{"--capture", capture}, "index"},
		// One node's capture given twice would count its sessions as
		// two nodes' (by name, or by another path to the same file).
		{[]string{"--capture", capture, "--capture", capture, "--index", index}, "--capture " + capture + ": the same file as --capture 1"},
		{[]string{"--capture", capture, "--capture", link, "--index", index}, "--capture " + link + ": the same file as --capture 1 (" + capture + ")"},
	} {
		args := append([]string{"privacy", "fetches", "--json"}, c.args...)
		stdout, stderr, status := runCLI(t, "", args...)
		if status != exitBadInput || stdout != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, `"exit_code":2`) {
			t.Errorf("%v: status %d, stdout %q, stderr %q", c.args, status, stdout, stderr)
		}
	}
}

// TestPrivacyFetchesGroupsAndIntersect: a payer pays the wallet's w twice
// (blocks 10 and 50), the change of the first payment funding the second;
// the wallet spends w at block 90. One client scanned the 200 blocks in
// two sessions, 0..120 and 80..199. The change rides in w's transactions
// and is grouped with it; --intersect joins the sessions, in which w is
// seen three times.
func TestPrivacyFetchesGroupsAndIntersect(t *testing.T) {
	dir := t.TempDir()
	hash := func(h int32) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("b", h))) }
	ix := universe.NewIndexWriter(dir, 0)
	defer ix.Close()
	for _, app := range []struct {
		c     string
		h, tx int32
	}{{"p1", 5, 2}, {"p1", 10, 3}, {"w", 10, 3}, {"c1", 10, 3}, {"c1", 50, 1}, {"w", 50, 1}, {"c2", 50, 1}, {"w", 90, 4}, {"o", 90, 4}} {
		ix.AddTx(app.c, app.h, int(app.tx))
	}
	for i := int32(0); i < 400; i++ {
		ix.AddTx(fmt.Sprintf("noise-%03d", i), i%200, 7)
		ix.AddTx(fmt.Sprintf("noise-%03d", i), (i*7+3)%200, 8)
	}
	index := writeIndexFile(t, dir, ix, 200, hash)
	ft := uint8(0)
	start := map[string]uint32{"s-1": 0, "s-2": 80}
	stop := map[string]int32{"s-1": 120, "s-2": 199}
	fetched := map[string][]int32{"s-1": {10, 50, 90}, "s-2": {90}}
	var lines []string
	for _, s := range []string{"s-1", "s-2"} {
		st := start[s]
		recs := []capture.Record{{Client: "127.0.0.1:5", Session: s, Command: capture.CmdGetCFilters, FilterType: &ft, StartHeight: &st, StopHash: hash(stop[s]).String()}}
		var blocks []capture.BlockRequest
		for _, h := range fetched[s] {
			blocks = append(blocks, capture.BlockRequest{Hash: hash(h).String(), Type: "witness_block"})
		}
		recs = append(recs, capture.Record{Client: "127.0.0.1:5", Session: s, Command: capture.CmdGetData, Blocks: blocks})
		for _, rec := range recs {
			b, _ := json.Marshal(rec)
			lines = append(lines, string(b))
		}
	}
	capturePath := filepath.Join(dir, "c.jsonl")
	os.WriteFile(capturePath, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	stdout, stderr, status := runCLI(t, "", "privacy", "fetches", "--capture", capturePath, "--index", index, "--intersect", "--json")
	// With --json the report names the sessions joined: standard error
	// holds no text ("--intersect joins 2 sessions" before).
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d: %s", status, stderr)
	}
	type match struct {
		Candidate   string  `json:"candidate"`
		Appearances int     `json:"appearance_count"`
		Group       int     `json:"group"`
		Probability float64 `json:"probability"`
		Low         float64 `json:"probability_low"`
		High        float64 `json:"probability_high"`
	}
	type report struct {
		Session   string  `json:"session"`
		CoLocated int     `json:"co_located_count"`
		Matched   []match `json:"matched"`
		Groups    []struct {
			Members     []string `json:"members"`
			Reason      string   `json:"reason"`
			Probability float64  `json:"probability"`
		} `json:"groups"`
		ByAppearances []struct {
			Appearances int `json:"appearance_count"`
			CoLocated   int `json:"co_located_count"`
		} `json:"by_appearances"`
	}
	var out struct {
		Index struct {
			Version int `json:"format_version"`
		} `json:"index"`
		Clients      []report `json:"clients"`
		Intersection *report  `json:"intersection"`
	}
	decodeJSON(t, stdout, &out)
	if out.Index.Version != universe.IndexVersion || len(out.Clients) != 2 || out.Intersection == nil || out.Intersection.Session != "s-1+s-2" {
		t.Fatalf("version %d, %d clients, intersection %+v", out.Index.Version, len(out.Clients), out.Intersection)
	}
	find := func(r *report, c string) match {
		for _, m := range r.Matched {
			if m.Candidate == c {
				return m
			}
		}
		return match{}
	}
	first := &out.Clients[0]
	w, c1 := find(first, "w"), find(first, "c1")
	// Every appearance of w shares a transaction with another match (p1,
	// c1, c2, o), as a payer's change reused in every payment would:
	// downloads cannot rank w above c1, so neither has more than the other.
	if w.Appearances != 3 || w.Group == 0 || c1.Group != w.Group || first.CoLocated < 2 || c1.Probability > w.Probability || w.Low > w.Probability {
		t.Fatalf("session 1: w %+v, c1 %+v, %d co-located", w, c1, first.CoLocated)
	}
	if g := first.Groups[w.Group-1]; g.Members[0] != "w" || !strings.Contains(g.Reason, "transactions") {
		t.Errorf("group %+v", g)
	}
	// In the join w keeps its three appearances; in the second session
	// alone it has one.
	if jw, w2 := find(out.Intersection, "w"), find(&out.Clients[1], "w"); jw.Appearances != 3 || w2.Appearances != 1 || jw.Probability < w2.Probability {
		t.Errorf("w joined %+v, second session %+v", jw, w2)
	}
	text, _, status := runCLI(t, "", "privacy", "fetches", "--capture", capturePath, "--index", index, "--intersect")
	for _, want := range []string{"intersection of 2 sessions", "group 1 (k = 3): w, ", "95% interval", "co-located", fmt.Sprintf("(version %d)", universe.IndexVersion)} {
		if status != exitOK || !strings.Contains(text, want) {
			t.Errorf("text, status %d, lacks %q:\n%s", status, want, text)
		}
	}
}

// TestPrivacyFetchesWarningsFolded: a warning every session gives (but for
// its counts) is said once, naming the sessions that give it, not once per
// session, and --json's warning_sessions lists them all beside it (eight
// kinds on this capture: singles, nested, paid riders alone, pooled,
// escorted, co-located, ambiguous, covers). Each session's report in
// --json folds them alike: its warning_indexes give the place of each of
// its warnings among those said once, and its warnings hold, whole, only
// those no other session gives. Before, every session's report repeated
// each shared warning whole.
// maxWarningKinds bounds the warnings TestPrivacyFetchesWarningsFolded's
// capture may say once folded: one a kind its sessions give (nine: the
// last, co-fetched claims, given by 2 of its 16 sessions).
const maxWarningKinds = 9

func TestPrivacyFetchesWarningsFolded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	runOK(t, "privacy", "simulate", "--seed", "3", "--wallets", "0", "--noise", "0", "--degenerate", "0",
		"--blocks", "200", "--txs-per-block", "3", "--fetch-wallets", "8", "--out", dir)
	stdout, stderr, status := runCLI(t, "", "privacy", "fetches", "--capture", filepath.Join(dir, "fetch-capture.jsonl"),
		"--index", filepath.Join(dir, "chain.idx"), "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out struct {
		Clients []struct {
			Session        string   `json:"session"`
			Warnings       []string `json:"warnings"`
			WarningIndexes []int    `json:"warning_indexes"`
		} `json:"clients"`
		Warnings        []string   `json:"warnings"`
		WarningSessions [][]string `json:"warning_sessions"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	own, whole := 0, 0
	for _, c := range out.Clients {
		if c.WarningIndexes == nil || c.Warnings == nil {
			t.Fatalf("session %s: warnings %q, warning_indexes %v: want both, lists", c.Session, c.Warnings, c.WarningIndexes)
		}
		own += len(c.WarningIndexes)
		alone := 0
		for _, i := range c.WarningIndexes {
			if i < 0 || i >= len(out.WarningSessions) || !slices.Contains(out.WarningSessions[i], c.Session) {
				t.Fatalf("session %s refers to warning %d, which does not list it (%d warnings)", c.Session, i, len(out.WarningSessions))
			}
			if len(out.WarningSessions[i]) == 1 {
				alone++
			}
		}
		if len(c.Warnings) != alone {
			t.Errorf("session %s: %d warnings whole (%q), want its %d given by no other session", c.Session, len(c.Warnings), c.Warnings, alone)
		}
		whole += len(c.Warnings)
	}
	if whole >= own {
		t.Errorf("the sessions' reports hold %d warnings whole of their %d: none folded", whole, own)
	}
	if len(out.Clients) < 8 || own <= len(out.Warnings) || len(out.Warnings) > maxWarningKinds || stderr != "" ||
		len(out.WarningSessions) != len(out.Warnings) {
		t.Fatalf("%d sessions with %d warnings of their own, %d warnings said (%d session lists), stderr %q",
			len(out.Clients), own, len(out.Warnings), len(out.WarningSessions), stderr)
	}
	ids := map[string]bool{}
	for _, c := range out.Clients {
		ids[c.Session] = true
	}
	listed := 0
	for i, w := range out.Warnings {
		if !regexp.MustCompile(`^(all \d+ sessions|both sessions|\d+ of \d+ sessions \(|session )`).MatchString(w) {
			t.Errorf("warning %q does not name the sessions that give it", w)
		}
		for _, id := range out.WarningSessions[i] {
			if !ids[id] {
				t.Errorf("warning %q lists %q, no session of the report", w, id)
			}
		}
		listed += len(out.WarningSessions[i])
	}
	// Each session's warning is listed once, beside the warning that says
	// it for all.
	if listed != own {
		t.Errorf("%d sessions listed beside the warnings, %d warnings of the sessions", listed, own)
	}
	// The intersection of one session is named as the intersection, not
	// as that session a second time.
	_, stderr, status = runCLI(t, "", "privacy", "fetches", "--capture", filepath.Join(dir, "fetch-capture.jsonl"),
		"--index", filepath.Join(dir, "chain.idx"), "--intersect", "--client", "127.1.0.1")
	if status != exitOK || !strings.Contains(stderr, "and the intersection: ") || strings.Contains(stderr, "2 sessions") {
		t.Fatalf("--intersect of one session: status %d, stderr %q", status, stderr)
	}
}

// threeBlockIndex writes, in a new directory, the index of a 200-block
// chain where the wallet's w appears in blocks 10, 50 and 90 beside 400
// scripts of two random blocks each, and returns the directory, the
// index and the chain's block hashes.
func threeBlockIndex(t *testing.T) (dir, index string, hash func(int32) chainhash.Hash) {
	t.Helper()
	dir = t.TempDir()
	hash = func(h int32) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("b", h))) }
	ix := universe.NewIndexWriter(dir, 0)
	defer ix.Close()
	for _, h := range []int32{10, 50, 90} {
		ix.AddTx("w", h, 1)
	}
	for i := int32(0); i < 400; i++ {
		ix.AddTx(fmt.Sprintf("noise-%03d", i), i%200, 7)
		ix.AddTx(fmt.Sprintf("noise-%03d", i), (i*7+3)%200, 8)
	}
	return dir, writeIndexFile(t, dir, ix, 200, hash), hash
}

// TestPrivacyFetchesCollude: a client fetched w's three blocks from two
// nodes, blocks 10 and 90 from one and 50 from the other, each capture in
// its own file. No node alone sees w matched; --collude joins the two
// captures (their session ids prefixed cap1: and cap2:) and matches w with
// its three appearances. --collude with --intersect is refused.
func TestPrivacyFetchesCollude(t *testing.T) {
	dir, index, hash := threeBlockIndex(t)
	ft, start := uint8(0), uint32(0)
	var captures []string
	for n, fetched := range [][]int32{{10, 90}, {50}} {
		recs := []capture.Record{{Client: "127.0.0.1:5", Session: "s", Command: capture.CmdGetCFilters, FilterType: &ft, StartHeight: &start, StopHash: hash(199).String()}}
		var blocks []capture.BlockRequest
		for _, h := range fetched {
			blocks = append(blocks, capture.BlockRequest{Hash: hash(h).String(), Type: "witness_block"})
		}
		recs = append(recs, capture.Record{Client: "127.0.0.1:5", Session: "s", Command: capture.CmdGetData, Blocks: blocks})
		var lines []string
		for _, rec := range recs {
			b, _ := json.Marshal(rec)
			lines = append(lines, string(b))
		}
		path := filepath.Join(dir, fmt.Sprintf("node%d.jsonl", n+1))
		os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		captures = append(captures, "--capture", path)
	}
	args := append([]string{"privacy", "fetches", "--index", index, "--collude", "--json"}, captures...)
	stdout, stderr, status := runCLI(t, "", args...)
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d: %s", status, stderr)
	}
	type report struct {
		Session string `json:"session"`
		Matched []struct {
			Candidate   string `json:"candidate"`
			Appearances int    `json:"appearance_count"`
		} `json:"matched"`
		Fetched []int32 `json:"fetched_heights"`
	}
	var out struct {
		Clients      []report `json:"clients"`
		Intersection *report  `json:"intersection"`
		Collusion    *report  `json:"collusion"`
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 2 || out.Clients[0].Session != "cap1:s" || out.Clients[1].Session != "cap2:s" || out.Intersection != nil || out.Collusion == nil {
		t.Fatalf("clients %+v, intersection %+v, collusion %+v", out.Clients, out.Intersection, out.Collusion)
	}
	for _, c := range out.Clients {
		for _, m := range c.Matched {
			if m.Candidate == "w" {
				t.Errorf("w matched at one node: %+v", c)
			}
		}
	}
	found := false
	for _, m := range out.Collusion.Matched {
		found = found || m.Candidate == "w" && m.Appearances == 3
	}
	if !found || out.Collusion.Session != "cap1:s|cap2:s" || len(out.Collusion.Fetched) != 3 {
		t.Errorf("collusion %+v: want w matched with 3 appearances over the 3 blocks", out.Collusion)
	}
	text, _, status := runCLI(t, "", append([]string{"privacy", "fetches", "--index", index, "--collude"}, captures...)...)
	if status != exitOK || !strings.Contains(text, "colluding nodes: 2 sessions") {
		t.Errorf("text, status %d:\n%s", status, text)
	}
	_, stderr, status = runCLI(t, "", append([]string{"privacy", "fetches", "--index", index, "--collude", "--intersect"}, captures...)...)
	if status != exitBadInput || !strings.Contains(stderr, "--collude and --intersect") {
		t.Errorf("--collude --intersect: status %d, %s", status, stderr)
	}
}

// TestPrivacyFetchesCoverTarget: --cover-target caps every probability at
// the target; a session that names a script at 0.95 or more is warned that
// covers cannot be ruled out without it, whatever its user agent (here
// not spvfilter's), and not with it; a target outside (0, 1) is bad input.
func TestPrivacyFetchesCoverTarget(t *testing.T) {
	dir, index, hash := threeBlockIndex(t)
	ft, start := uint8(0), uint32(0)
	var blocks []capture.BlockRequest
	for _, h := range []int32{10, 50, 90} {
		blocks = append(blocks, capture.BlockRequest{Hash: hash(h).String(), Type: "witness_block"})
	}
	var lines []string
	for _, rec := range []capture.Record{
		{Client: "127.0.0.1:5", Session: "s", Command: capture.CmdVersion, UserAgent: "/btcwallet:0.16.10/"},
		{Client: "127.0.0.1:5", Session: "s", Command: capture.CmdGetCFilters, FilterType: &ft, StartHeight: &start, StopHash: hash(199).String()},
		{Client: "127.0.0.1:5", Session: "s", Command: capture.CmdGetData, Blocks: blocks},
	} {
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b))
	}
	path := filepath.Join(dir, "c.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	probability := func(args ...string) (float64, string) {
		stdout, stderr, status := runCLI(t, "", append([]string{"privacy", "fetches", "--capture", path, "--index", index, "--json"}, args...)...)
		if status != exitOK || stderr != "" {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		var out struct {
			Warnings []string `json:"warnings"`
			Clients  []struct {
				UserAgent string `json:"user_agent"`
				Matched   []struct {
					Candidate   string  `json:"candidate"`
					Probability float64 `json:"probability"`
				} `json:"matched"`
			} `json:"clients"`
		}
		decodeJSON(t, stdout, &out)
		for _, m := range out.Clients[0].Matched {
			if m.Candidate == "w" {
				return m.Probability, strings.Join(out.Warnings, "\n")
			}
		}
		t.Fatalf("%v: w not matched: %s", args, stdout)
		return 0, ""
	}
	p, warned := probability()
	if p < 0.95 || !strings.Contains(warned, "covers cannot be ruled out") {
		t.Errorf("without a target: w at %.3f, warnings %q", p, warned)
	}
	p, warned = probability("--cover-target", "0.5")
	if p != 0.5 || strings.Contains(warned, "covers cannot be ruled out") {
		t.Errorf("--cover-target 0.5: w at %.3f, warnings %q", p, warned)
	}
	for _, bad := range []string{"1", "-0.2", "2"} {
		_, stderr, status := runCLI(t, "", "privacy", "fetches", "--capture", path, "--index", index, "--cover-target", bad)
		if status != exitBadInput || !strings.Contains(stderr, "--cover-target "+bad+": want 0 (the default) for none, or a probability in (0, 1)") {
			t.Errorf("--cover-target %s: status %d, %s", bad, status, stderr)
		}
	}
}
