package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUniverseFailureLeavesNoFile: a privacy universe whose download
// fails half way (a node that serves a damaged block) leaves no --out or
// --index file cut short, nor its runs spilled beside --index: before,
// the candidates of the blocks before it stayed in --out, a universe
// privacy analyze takes as whole, and the same command run again was
// refused ("the file exists"). Run again on a node that serves the
// blocks, it writes both without --force.
func TestUniverseFailureLeavesNoFile(t *testing.T) {
	node := peertest.StartBtcd(t)
	hashes := node.Generate(t, 12)
	damager := peertest.NewBlockDamager(t, node.P2PAddr, *hashes[8], -1) // height 9
	for _, tc := range []struct {
		name  string
		index bool
	}{
		{"--out", false},
		{"--out and --index", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, index := filepath.Join(dir, "universe.txt"), filepath.Join(dir, "universe.idx")
			args := func(peer string) []string {
				a := []string{"privacy", "universe", "--peer", peer, "--network", "regtest", "--out", out, "--timeout", "5s"}
				if tc.index {
					a = append(a, "--index", index, "--index-memory", "65536")
				}
				return a
			}
			_, stderr, status := runCLI(t, "", args(damager.Addr)...)
			if status != exitFailure || !strings.Contains(stderr, "--peer "+damager.Addr) {
				t.Fatalf("through the damager: status %d, stderr %q; want %d naming --peer", status, stderr, exitFailure)
			}
			if left := dirNames(t, dir); len(left) != 0 {
				t.Errorf("files left after the failure: %q", left)
			}
			_, stderr, status = runCLI(t, "", args(node.P2PAddr)...)
			if status != exitOK {
				t.Fatalf("again, on the node: status %d, stderr %q", status, stderr)
			}
			want := []string{"universe.txt"}
			if tc.index {
				want = []string{"universe.idx", "universe.txt"}
			}
			if got := dirNames(t, dir); !slices.Equal(got, want) {
				t.Errorf("files after the run: %q, want %q", got, want)
			}
			b, err := os.ReadFile(out)
			if err != nil || !strings.Contains(string(b), "blocks 0..12") {
				t.Errorf("universe written: %.100q, %v", b, err)
			}
		})
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestHelpSaysDefaultOnce: no flag of any command's --help states its
// default twice: before, privacy capture said "--duration duration stop
// after this long (default: run until interrupted) (default 0s)", a zero
// duration not being known as no default once its value was wrapped.
func TestHelpSaysDefaultOnce(t *testing.T) {
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		stdout, _, status := runCLIInProcess("", args...)
		if status != exitOK {
			t.Fatalf("%q: status %d", args, status)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-") && strings.Count(line, "(default") > 1 {
				t.Errorf("%s: %q states its default twice", c.CommandPath(), strings.TrimSpace(line))
			}
		}
	})
}

// TestNewcomerByteSizes: a size in bytes written with a unit, as a
// newcomer writes memory sizes, is told to be a number of bytes, with
// the default written as one: before, "want a whole number".
func TestNewcomerByteSizes(t *testing.T) {
	node := "127.0.0.1:1"
	runRows(t, []contractRow{
		{name: "--filter-cache with a unit", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--filter-cache", "64MB"},
			status: exitBadInput, stderr: []string{`--filter-cache "64MB": want a number of bytes, a whole number without a unit (268435456 is 256 MiB; 0 for none)`}},
		{name: "--index-memory with a unit", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "-", "--index-memory", "64M"},
			status: exitBadInput, stderr: []string{`--index-memory "64M": want a number of bytes, a whole number without a unit, at least 65536 (67108864 is 64 MiB)`}},
		{name: "--index-memory too small", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "-", "--index-memory", "100"},
			status: exitBadInput, stderr: []string{"--index-memory 100: want a number of bytes, a whole number without a unit, at least 65536 (67108864 is 64 MiB), such as --index-memory 67108864"}},
	})
}

// TestNewcomerUnwritable: a --datadir, or a file to write, in a directory
// this user may not write in (/sys, which no user may create files in)
// is bad input named by its flag before any connection or work, without
// the names of the tool's own files or a library's words: before, "scan
// --datadir" said "store: mkdir /sys/regtest: permission denied" (or
// "store: DIR/regtest/LOCK: ..."), status 1, and privacy universe and lab
// --save-blocks named their temporary file, after connecting.
func TestNewcomerUnwritable(t *testing.T) {
	const sys = "/sys"
	if err := os.WriteFile(filepath.Join(sys, "spvfilter-probe"), nil, 0o600); err == nil || !os.IsPermission(err) {
		t.Skipf("%s is not a directory no file can be created in here: %v", sys, err)
	}
	// A data directory of one's own whose network directory is not.
	linked := t.TempDir()
	if err := os.Symlink(sys, filepath.Join(linked, "regtest")); err != nil {
		t.Fatal(err)
	}
	const node = "127.0.0.1:1"
	scan := []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51"}
	denied := "permission denied (no file can be created in " + sys + "): give a path you can write to"
	hidden := []string{"store:", "mkdir", ".spvfilter-probe", "connection refused"}
	runRows(t, []contractRow{
		{name: "scan --datadir", args: append(scan, "--datadir", sys),
			status: exitBadInput, stderr: []string{"--datadir " + sys + ": permission denied (no file can be created in " + sys + "): give a directory you can write in"}, notInErr: hidden},
		{name: "peers --datadir", args: []string{"peers", "--connect", node, "--network", "regtest", "--datadir", sys},
			status: exitBadInput, stderr: []string{"--datadir " + sys + ": permission denied"}, notInErr: hidden},
		{name: "a network directory not one's own", args: append(scan, "--datadir", linked),
			status: exitBadInput, stderr: []string{"--datadir " + linked + ": " + filepath.Join(linked, "regtest", "LOCK") + ": permission denied: give a directory you can write in"}, notInErr: hidden},
		{name: "privacy universe --out", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", sys + "/u.txt"},
			status: exitBadInput, stderr: []string{"--out " + sys + "/u.txt: " + denied}, notInErr: hidden},
		{name: "privacy universe --index", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "-", "--index", sys + "/u.idx"},
			status: exitBadInput, stderr: []string{"--index " + sys + "/u.idx: " + denied}, notInErr: hidden},
		{name: "lab --save-blocks", args: []string{"lab", "--connect", node, "--network", "regtest", "--save-blocks", sys + "/b.blocks"},
			status: exitBadInput, stderr: []string{"--save-blocks " + sys + "/b.blocks: " + denied}, notInErr: hidden},
		{name: "privacy model --plot", args: []string{"privacy", "model", "--plot", sys + "/m.svg"},
			status: exitBadInput, stderr: []string{"--plot " + sys + "/m.svg: " + denied}, notInErr: hidden},
		{name: "demo --plot", args: []string{"demo", "--plot", sys + "/d.svg"},
			status: exitBadInput, stderr: []string{"--plot " + sys + "/d.svg: " + denied}, notInErr: hidden},
		{name: "privacy capture --out", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", sys + "/c.jsonl"},
			status: exitBadInput, stderr: []string{"--out " + sys + "/c.jsonl: " + denied}, notInErr: hidden},
	})
}

// TestNewcomerHashLength: a block hash or filter header of the wrong
// length says how long a hash is in hex digits, as it is typed: before,
// "--block-hash: odd number of hex digits (3)" said nothing of the 64
// wanted, and "1 byte, a hash has 32" counted bytes only.
func TestNewcomerHashLength(t *testing.T) {
	runRows(t, []contractRow{
		{name: "an odd --block-hash", args: []string{"gcs", "match", "--filter", "00", "--block-hash", "abc", "51"},
			status: exitBadInput, stderr: []string{"--block-hash: odd number of hex digits (3): a hash has 64 hex digits (32 bytes, as RPC shows it)"}},
		{name: "an odd --prev-header", args: []string{"gcs", "header", "--filter", "00", "--prev-header", "abc"},
			status: exitBadInput, stderr: []string{"--prev-header: odd number of hex digits (3): a hash has 64 hex digits"}},
		{name: "a short --block-hash", args: []string{"gcs", "match", "--filter", "00", "--block-hash", "abcd", "51"},
			status: exitBadInput, stderr: []string{"--block-hash: 2 bytes, a hash has 32 (64 hex digits, as RPC shows it)"}},
	})
}

// TestNewcomerUniverseCutShort: a universe cut inside its last line (a
// copy or download not finished) is said once, as the universe's, with
// the cut named: before, every session of the capture repeated "N of M
// universe lines skipped" (one warning per session), and nothing said the
// file may be cut short.
func TestNewcomerUniverseCutShort(t *testing.T) {
	in := newRowFiles(t)
	whole, err := os.ReadFile(filepath.Join(in.sim, "universe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	head := strings.Join(lines[:10], "")
	cut, ended := filepath.Join(in.dir, "cut.txt"), filepath.Join(in.dir, "ended.txt")
	bad := "03b70c81b913f7b942dd1d886320064" // a public key cut at an odd digit
	if err := os.WriteFile(cut, []byte(head+bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ended, []byte(head+bad+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	skipped := `1 of 11 universe lines skipped, not candidates (first: line 11: "` + bad + `" is neither an address nor hex`
	cutShort := func(name string) string {
		return "; --universe " + name + " ends inside that line, without a newline: was it cut short?)"
	}
	for _, tc := range []struct {
		name, universe, stdin string
		args                  []string
		want, not             string
	}{
		{"a capture's sessions", cut, "", []string{"--capture", in.capture}, "universe: " + skipped + cutShort(cut), ""},
		{"a filter", cut, "", []string{"--filter", corePayload}, "universe: " + skipped + cutShort(cut), ""},
		{"standard input", "-", head + bad, []string{"--capture", in.capture}, "universe: " + skipped + cutShort("-"), ""},
		{"a last line that ends", ended, "", []string{"--capture", in.capture}, "universe: " + skipped + ")", "was it cut short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"privacy", "analyze", "--universe", tc.universe}, tc.args...)
			_, stderr, status := runCLI(t, tc.stdin, args...)
			if status != exitOK || !strings.Contains(stderr, tc.want) || tc.not != "" && strings.Contains(stderr, tc.not) {
				t.Fatalf("status %d, stderr %q\nwant it to hold %q", status, stderr, tc.want)
			}
			if n := strings.Count(stderr, "universe lines skipped"); n != 1 {
				t.Errorf("the skipped lines said %d times", n)
			}
			stdout, _, _ := runCLI(t, tc.stdin, append(args, "--json")...)
			var out struct{ Warnings []string }
			if err := json.Unmarshal([]byte(stdout), &out); err != nil || !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, tc.want) }) {
				t.Errorf("--json warnings %q (%v), want one holding %q", out.Warnings, err, tc.want)
			}
		})
	}
}
