package banlist

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// testClock is a clock the test moves.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newTestClock() *testClock               { return &testClock{time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

// testBans is a ban list of a network's directory and what its opening
// noted.
type testBans struct {
	*List
	dir   string
	notes []string
}

func (b *testBans) Recovered() []string { return b.notes }
func (b *testBans) Dir() string         { return b.dir }

// openClock opens the ban list of dir's regtest directory, as a store of
// dir kept it.
func openClock(t testing.TB, dir string, c *testClock) *testBans {
	t.Helper()
	dir = filepath.Join(dir, "regtest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, notes := openList(dir, false, c.now)
	return &testBans{l, dir, notes}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:18444", "192.0.2.1"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:18444", "127.0.0.1:18444"}, // nodes on this machine by port
		{"[::1]:9", "[::1]:9"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"[::1]:18444", "[::1]:18444"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"[::ffff:7f00:1]:8333", "127.0.0.1:8333"},
		{"[::ffff:c000:201]:8333", "192.0.2.1"},
		{"2001:DB8:0:0:0:0:0:1", "2001:db8::1"},
		{"[2001:0db8::0001]:8333", "2001:db8::1"},
		{"fe80::1%lo", "fe80::1%lo"},
		{"LocalHost.", "localhost"},
		{"node.example:8333", "node.example"},
		{"abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion", "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion"},
		{"", ""},
		{":8333", ""},
		{"a..b", ""},
		{"has space", ""},
		{"bad/char", ""},
		{strings.Repeat("a", 64) + ".example", ""},
		{strings.Repeat("abc.", 64) + "de", ""},
	}
	for _, tt := range tests {
		got, err := normalizeHost(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrBadHost) {
				t.Errorf("normalizeHost(%q) = %q, %v; want ErrBadHost", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("normalizeHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestBans(t *testing.T) {
	dir := t.TempDir()
	clock := newTestClock()
	s := openClock(t, dir, clock)
	start := clock.t
	steps := []struct {
		name string
		do   func() error
	}{
		{"ban with a port", func() error { return s.Ban("192.0.2.1:18444", "sent a bad filter", time.Hour) }},
		{"ban IPv6 in brackets", func() error { return s.Ban("[2001:db8::1]:18445", "lied about headers", 2*time.Hour) }},
		{"ban a name, default duration", func() error { return s.Ban("Node.Example.", "stalled", 0) }},
		{"ban a bad host", func() error {
			if err := s.Ban("not a host", "x", time.Hour); !errors.Is(err, ErrBadHost) {
				return fmt.Errorf("bad host: %v", err)
			}
			return nil
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	checkBans := func(s *testBans, want map[string]time.Time) {
		t.Helper()
		got := s.Bans()
		if len(got) != len(want) {
			t.Fatalf("Bans() = %v, want %d bans", got, len(want))
		}
		for i, b := range got {
			if i > 0 && got[i-1].Host >= b.Host {
				t.Fatalf("Bans() not sorted by host: %v", got)
			}
			if until, ok := want[b.Host]; !ok || !b.Until.Equal(until) {
				t.Fatalf("ban %v, want until %v", b, until)
			}
		}
	}
	want := map[string]time.Time{
		"192.0.2.1":    start.Add(time.Hour),
		"2001:db8::1":  start.Add(2 * time.Hour),
		"node.example": start.Add(DefaultDuration),
	}
	checkBans(s, want)
	// Any form of a banned host is banned.
	for _, h := range []string{"192.0.2.1", "192.0.2.1:1", "::ffff:192.0.2.1", "2001:db8::1", "[2001:db8:0::1]:9", "node.example", "NODE.EXAMPLE:1"} {
		if b, ok := s.Banned(h); !ok || b.Since != start {
			t.Fatalf("Banned(%q) = %v, %v", h, b, ok)
		}
	}
	if b, _ := s.Banned("192.0.2.1"); b.Reason != "sent a bad filter" {
		t.Fatalf("reason %q", b.Reason)
	}
	if _, ok := s.Banned("127.0.0.2"); ok {
		t.Fatal("an address never banned is banned")
	}

	// A second ban keeps the later end and takes the new reason.
	clock.advance(10 * time.Minute)
	if err := s.Ban("192.0.2.1", "again", time.Minute); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Banned("192.0.2.1"); b.Reason != "again" || !b.Until.Equal(start.Add(time.Hour)) || b.Since != start {
		t.Fatalf("after a shorter second ban: %v", b)
	}
	if err := s.Ban("192.0.2.1", strings.Repeat("é", maxBanReason), 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Banned("192.0.2.1")
	if !b.Until.Equal(clock.t.Add(3*time.Hour)) || len(b.Reason) > maxBanReason || !strings.HasPrefix(b.Reason, "éé") || strings.ContainsRune(b.Reason, '\uFFFD') {
		t.Fatalf("after a longer ban with a long reason: %v (%d bytes)", b, len(b.Reason))
	}
	want["192.0.2.1"] = clock.t.Add(3 * time.Hour)

	// Unban.
	if err := s.Unban("[2001:db8::1]:1"); err != nil {
		t.Fatal(err)
	}
	delete(want, "2001:db8::1")
	if err := s.Unban("127.0.0.9"); err != nil {
		t.Fatal(err)
	}
	checkBans(s, want)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ban("127.0.0.3", "closed", time.Hour); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ban after Close: %v", err)
	}

	// The second life has the same bans.
	s = openClock(t, dir, clock)
	if r := s.Recovered(); len(r) != 0 {
		t.Fatalf("notes %q", r)
	}
	checkBans(s, want)

	// Bans end.
	clock.advance(3 * time.Hour)
	delete(want, "192.0.2.1")
	if _, ok := s.Banned("192.0.2.1"); ok {
		t.Fatal("a ban past its end holds")
	}
	checkBans(s, want)
	s.Close()
	clock.advance(DefaultDuration)
	s = openClock(t, dir, clock)
	defer s.Close()
	checkBans(s, nil)
	if err := s.Ban("127.0.0.4", "", time.Hour); err != nil {
		t.Fatal(err)
	}
	// The file holds the bans in force only.
	got, dropped, err := readBans(filepath.Join(s.Dir(), bansFile))
	if err != nil || len(dropped) != 0 || len(got) != 1 || got[0].Host != "127.0.0.4" {
		t.Fatalf("file holds %v, %v", got, err)
	}
}

func TestBansCap(t *testing.T) {
	clock := newTestClock()
	s := openClock(t, t.TempDir(), clock)
	defer s.Close()
	s.max = 5
	for i := 0; i < 8; i++ {
		if err := s.Ban(fmt.Sprintf("127.0.0.%d", i), "", time.Hour); err != nil {
			t.Fatal(err)
		}
		clock.advance(time.Second)
	}
	got := s.Bans()
	if len(got) != 5 {
		t.Fatalf("%d bans kept, want 5", len(got))
	}
	for i := 0; i < 8; i++ {
		if _, ok := s.Banned(fmt.Sprintf("127.0.0.%d", i)); ok != (i >= 3) {
			t.Fatalf("host %d banned: %v; want the oldest dropped", i, ok)
		}
	}
	// Renewing a ban at the cap drops nothing.
	if err := s.Ban("127.0.0.3", "", time.Hour); err != nil {
		t.Fatal(err)
	}
	if len(s.Bans()) != 5 {
		t.Fatal("renewing a ban dropped another")
	}
	// Ended bans make room first.
	clock.advance(time.Hour - 3*time.Second) // the bans of hosts 4 and 5 end
	if err := s.Ban("192.0.2.100", "", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Banned("127.0.0.7"); !ok || len(s.Bans()) != 4 {
		t.Fatalf("bans after some ended: %v", s.Bans())
	}
}

func TestBansDamaged(t *testing.T) {
	clock := newTestClock()
	since := clock.t.Add(-time.Hour).Format(time.RFC3339)
	until := clock.t.Add(time.Hour).Format(time.RFC3339)
	ban := func(host string) string {
		return fmt.Sprintf(`{"host":%q,"reason":"r","since":%q,"until":%q}`, host, since, until)
	}
	file := func(bans ...string) string {
		return `{"version":1,"bans":[` + strings.Join(bans, ",") + `]}`
	}
	many := make([]string, maxBans+1)
	for i := range many {
		many[i] = ban(fmt.Sprintf("h%d.example", i))
	}
	good := ban("198.51.100.7") // kept beside every bad ban
	tests := []struct {
		name    string
		content string // written to the file, unless setup is set
		setup   func(t *testing.T, path string)
		loaded  int // bans loaded; -1: set aside
		dropped bool
	}{
		{"sound", file(ban("192.0.2.1"), ban("2001:db8::1")), nil, 2, false},
		{"sound, one ended", file(ban("192.0.2.1"), fmt.Sprintf(`{"host":"2001:db8::1","reason":"","since":%q,"until":%q}`, clock.t.Add(-2*time.Hour).Format(time.RFC3339), since)), nil, 1, false},
		{"empty list", file(), nil, 0, false},
		{"version 2 with a proof", strings.Replace(file(strings.Replace(ban("192.0.2.1"), `"r"`, `"r","proof":true`, 1)), `"version":1`, `"version":2`, 1), nil, 1, false},
		{"empty file", "", nil, -1, false},
		{"garbage", "\x00\x01 not json", nil, -1, false},
		{"cut short", file(ban("192.0.2.1"))[:40], nil, -1, false},
		{"data after", file(ban("192.0.2.1")) + "{}", nil, -1, false},
		{"version 3", strings.Replace(file(), `"version":1`, `"version":3`, 1), nil, -1, false},
		{"no version", `{"bans":[]}`, nil, -1, false},
		{"unknown field", strings.Replace(file(), `"bans"`, `"extra":1,"bans"`, 1), nil, -1, false},
		{"a ban of unknown fields", file(strings.Replace(ban("192.0.2.1"), `"r"`, `"r","extra":1`, 1), good), nil, 1, true},
		{"a proof in version 1", file(strings.Replace(ban("192.0.2.1"), `"r"`, `"r","proof":true`, 1), good), nil, 1, true},
		{"a ban not an object", file(`[1,2]`, good), nil, 1, true},
		{"host with a port", file(ban("192.0.2.1:80"), good), nil, 1, true},
		{"host not normal", file(good, ban("::FFFF:192.0.2.1")), nil, 1, true},
		{"host bad", file(ban("a b"), good), nil, 1, true},
		{"host twice", file(ban("192.0.2.1"), ban("192.0.2.1"), good), nil, 2, true},
		{"reason too long", file(strings.Replace(ban("2001:db8::1"), `"r"`, `"`+strings.Repeat("x", maxBanReason+1)+`"`, 1), good), nil, 1, true},
		{"ends before it begins", file(fmt.Sprintf(`{"host":"2001:db8::1","reason":"","since":%q,"until":%q}`, until, since), good), nil, 1, true},
		{"no start", file(fmt.Sprintf(`{"host":"2001:db8::1","reason":"","until":%q}`, until), good), nil, 1, true},
		{"bad time", file(`{"host":"2001:db8::1","reason":"","since":"yesterday","until":"tomorrow"}`, good), nil, 1, true},
		{"too many", file(many...), nil, maxBans, true},
		{"too large", "", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(file()), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, maxBansFileSize+1); err != nil {
				t.Fatal(err)
			}
		}, -1, false},
		{"a dangling symbolic link", "", func(t *testing.T, path string) {
			if err := os.Symlink("nowhere.json", path); err != nil {
				t.Fatal(err)
			}
		}, -1, false},
		{"a directory", "", func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "regtest", bansFile)
			openClock(t, dir, clock).Close()
			if tt.setup != nil {
				tt.setup(t, path)
			} else if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			checkRead(t, filepath.Dir(path), clock, max(tt.loaded, 0), tt.loaded < 0 || tt.dropped)
			s := openClock(t, dir, clock)
			defer s.Close()
			notes := s.Recovered()
			aside, _ := filepath.Glob(path + ".damaged-*")
			if tt.dropped {
				// The bad bans are dropped, each said why, the others
				// kept; the file as it was is set aside and the kept
				// bans written.
				if len(notes) != 1 || !strings.Contains(notes[0], "dropped") || !strings.Contains(notes[0], "set aside as") ||
					len(aside) != 1 || len(s.Bans()) != tt.loaded {
					t.Fatalf("notes %q, set aside %q, %d bans loaded, want %d", notes, aside, len(s.Bans()), tt.loaded)
				}
				t.Log(notes[0][:min(len(notes[0]), 200)])
				s.Close()
				s = openClock(t, dir, clock)
				if r := s.Recovered(); len(r) != 0 || len(s.Bans()) != tt.loaded {
					t.Fatalf("the next life: notes %q, %d bans", r, len(s.Bans()))
				}
				return
			}
			if tt.loaded >= 0 {
				if len(notes) != 0 || len(aside) != 0 || len(s.Bans()) != tt.loaded {
					t.Fatalf("sound file: notes %q, set aside %q, %d bans loaded, want %d", notes, aside, len(s.Bans()), tt.loaded)
				}
				return
			}
			if len(notes) != 1 || len(aside) != 1 || !strings.HasPrefix(notes[0], bansFile+": ") ||
				!strings.Contains(notes[0], "set aside as "+filepath.Base(aside[0])) || len(s.Bans()) != 0 {
				t.Fatalf("notes %q, set aside %q, bans %v", notes, aside, s.Bans())
			}
			t.Log(notes[0][:min(len(notes[0]), 200)])
			// A new list is written; the next life reads it.
			if err := s.Ban("127.0.0.5", "", time.Hour); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s = openClock(t, dir, clock)
			if r := s.Recovered(); len(r) != 0 {
				t.Fatalf("notes after a new list: %q", r)
			}
			if _, ok := s.Banned("127.0.0.5"); !ok {
				t.Fatal("ban of the new list lost")
			}
		})
	}
}

// checkRead checks that Read lists n bans of dir, with a note saying the
// file is left as it is if damaged, and writes nothing.
func checkRead(t *testing.T, dir string, clock *testClock, n int, damaged bool) {
	t.Helper()
	before := peertest.Tree(t, dir)
	bans, notes := readList(dir, clock.now)
	if after := peertest.Tree(t, dir); !slices.Equal(before, after) {
		t.Fatalf("Read wrote: before %q, after %q", before, after)
	}
	if len(bans) != n || len(notes) > 1 || (len(notes) == 1) != damaged ||
		damaged && (!strings.HasPrefix(notes[0], bansFile+": ") || !strings.Contains(notes[0], "the file is left as it is")) {
		t.Fatalf("Read: %d bans, notes %q; want %d, a note: %v", len(bans), notes, n, damaged)
	}
}

// TestDroppedCounted: the note of the bans a file's checks dropped
// counts them in the singular when there is one, both when the list is
// opened and when it is read.
func TestDroppedCounted(t *testing.T) {
	clock := newTestClock()
	ban := func(host string) string {
		return fmt.Sprintf(`{"host":%q,"reason":"r","since":%q,"until":%q}`, host, clock.t.Add(-time.Hour).Format(time.RFC3339), clock.t.Add(time.Hour).Format(time.RFC3339))
	}
	for _, tc := range []struct {
		bad  int
		want string
	}{
		{1, bansFile + ": 1 ban dropped (ban 0: "},
		{2, bansFile + ": 2 bans dropped (ban 0: "},
	} {
		dir := t.TempDir()
		bans := append(slices.Repeat([]string{ban("a b")}, tc.bad), ban("192.0.2.1"))
		if err := os.MkdirAll(filepath.Join(dir, "regtest"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "regtest", bansFile), []byte(`{"version":2,"bans":[`+strings.Join(bans, ",")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, read := readList(filepath.Join(dir, "regtest"), clock.now)
		s := openClock(t, dir, clock)
		s.Close()
		for _, notes := range [][]string{read, s.Recovered()} {
			if len(notes) != 1 || !strings.HasPrefix(notes[0], tc.want) || !strings.Contains(notes[0], "), 1 kept") {
				t.Errorf("%d bad: notes %q, want one beginning %q", tc.bad, notes, tc.want)
			}
		}
	}
}

// TestBanProof: a ban with proof is written and read back as one, stays
// one when the host is banned again by hand, and a list of version 1
// (written before bans said whether they rest on a proof) is read as
// bans without proof.
func TestBanProof(t *testing.T) {
	clock := newTestClock()
	dir := t.TempDir()
	s := openClock(t, dir, clock)
	if err := s.BanWithProof("127.0.0.2:18444", "served a filter its block proves false", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Ban("127.0.0.2:18444", "by hand", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Ban("127.0.0.3:18444", "by hand", time.Hour); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openClock(t, dir, clock)
	if b, ok := s.Banned("127.0.0.2:18444"); !ok || !b.Proof || b.Reason != "by hand" {
		t.Errorf("a ban with proof banned again by hand: %+v", b)
	}
	if b, ok := s.Banned("127.0.0.3:18444"); !ok || b.Proof {
		t.Errorf("a ban by hand: %+v", b)
	}
	path := filepath.Join(s.Dir(), bansFile)
	s.Close()
	v1 := fmt.Sprintf(`{"version":1,"bans":[{"host":"127.0.0.4:1","reason":"outvoted by 2 peers","since":%q,"until":%q}]}`,
		clock.t.Add(-time.Minute).Format(time.RFC3339), clock.t.Add(time.Hour).Format(time.RFC3339))
	if err := os.WriteFile(path, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openClock(t, dir, clock)
	defer s.Close()
	if b, ok := s.Banned("127.0.0.4:1"); !ok || b.Proof || len(s.Recovered()) != 0 {
		t.Errorf("a ban of version 1: %+v, notes %q", b, s.Recovered())
	}
}

// TestBanReasonsHaveNoControlCharacters: a reason holding terminal escape
// sequences and line breaks (a reason may quote what a peer sent), given
// to Ban or found in a bans.json written by hand, comes back with its
// control characters replaced, so that printing the bans cannot drive the
// user's terminal.
func TestBanReasonsHaveNoControlCharacters(t *testing.T) {
	clock := newTestClock()
	dir := t.TempDir()
	const reason = "rejected: \x1b[2J\x1b[31mfake\x1b[0m\nbanned 127.0.0.9\r\x07"
	s := openClock(t, dir, clock)
	if err := s.Ban("127.0.0.2:18444", reason, time.Hour); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), bansFile)
	s.Close()
	data, err := json.Marshal(map[string]any{"version": 2, "bans": []map[string]any{{
		"host": "127.0.0.3:18444", "reason": reason, "proof": false,
		"since": clock.t.Add(-time.Minute).Format(time.RFC3339), "until": clock.t.Add(time.Hour).Format(time.RFC3339)}}})
	if err != nil {
		t.Fatal(err)
	}
	s = openClock(t, dir, clock)
	if b, ok := s.Banned("127.0.0.2:18444"); !ok || strings.IndexFunc(b.Reason, unicode.IsControl) >= 0 || !strings.Contains(b.Reason, "fake") {
		t.Errorf("a reason given to Ban: %q", b.Reason)
	}
	s.Close()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openClock(t, dir, clock)
	defer s.Close()
	if b, ok := s.Banned("127.0.0.3:18444"); !ok || strings.IndexFunc(b.Reason, unicode.IsControl) >= 0 || !strings.Contains(b.Reason, "fake") {
		t.Errorf("a reason read from the file: %q (banned %v, notes %q)", b.Reason, ok, s.Recovered())
	}
}

// TestBansDanglingLink: a ban list that is a symbolic link to no file is
// not read as no list: Read and Open name the link and where it leads.
func TestBansDanglingLink(t *testing.T) {
	clock := newTestClock()
	dir := t.TempDir()
	openClock(t, dir, clock).Close()
	path := filepath.Join(dir, "regtest", bansFile)
	if err := os.Symlink("elsewhere/bans.json", path); err != nil {
		t.Fatal(err)
	}
	want := bansFile + ": a symbolic link to elsewhere/bans.json, which leads to no file"
	if _, notes := readList(filepath.Dir(path), clock.now); len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
		t.Errorf("Read: notes %q, want %q", notes, want)
	}
	if err := Check(filepath.Dir(path)); err == nil || err.Error() != path+": a symbolic link to elsewhere/bans.json, which leads to no file" {
		t.Errorf("Check: %v", err)
	}
	s := openClock(t, dir, clock)
	defer s.Close()
	if notes := s.Recovered(); len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
		t.Errorf("Open: notes %q, want %q", notes, want)
	}
}

// TestCheck: Check passes a list that is missing, sound or damaged (Read
// says so), and names one that cannot be read.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string // in the error; "" for none
	}{
		{"missing", func(*testing.T, string) {}, ""},
		{"damaged", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a dangling link", func(t *testing.T, path string) {
			if err := os.Symlink("gone", path); err != nil {
				t.Fatal(err)
			}
		}, "bans.json: a symbolic link to gone, which leads to no file"},
		{"a link to itself", func(t *testing.T, path string) {
			if err := os.Symlink(bansFile, path); err != nil {
				t.Fatal(err)
			}
		}, "bans.json: too many levels of symbolic links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, filepath.Join(dir, bansFile))
			err := Check(dir)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}
