package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// dirFiles is what dir holds: each entry's name and, for a file, its
// contents ("<dir>" for a directory). A dir that does not exist holds
// nothing.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			files[e.Name()] = "<dir>"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// writing reports whether a file not in before shows in dir, other than
// the probe of whether a file can be created there (see canCreateIn):
// one being written.
func writing(dir string, before map[string]string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := before[e.Name()]; !ok && !strings.HasPrefix(e.Name(), ".spvfilter-probe-") {
			return true
		}
	}
	return false
}

// TestInterruptLeavesNoPartialFile interrupts commands that write files
// as they start writing: the process, the test binary as spvfilter, gets
// SIGINT the moment a new entry shows in the directory its files go to
// (or after a while, for a command that writes only at the end). Each
// must end with status 130, name the files it did not write, and leave
// the directory as it was: no file cut short, or whole but of a run that
// did not finish, under a name a later command reads, no temporary file
// behind, and an earlier simulation's files not mixed with some of the
// new one's. Before, the signal ended a plot's process half way through
// the file, and simulate's had written some files and left a ".tmp".
func TestInterruptLeavesNoPartialFile(t *testing.T) {
	earlier := t.TempDir() // an earlier simulation, replaced with --force
	if _, stderr, status := runCLI(t, "", "privacy", "simulate", "--seed", "2", "--wallets", "3", "--blocks", "20", "--txs-per-block", "2",
		"--fetch-wallets", "0", "--fetch-noise", "0", "--out", earlier); status != exitOK {
		t.Fatalf("earlier simulation: status %d: %s", status, stderr)
	}
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	files := func(d string, names ...string) string {
		var paths []string
		for _, n := range names {
			paths = append(paths, filepath.Join(d, n))
		}
		return strings.Join(paths, ", ")
	}
	simFiles := []string{"universe.txt", "capture.jsonl", "labels.json", "chain.idx", "fetch-capture.jsonl"}
	for _, tc := range []struct {
		name  string
		args  []string
		watch string        // the directory the files go to
		wait  time.Duration // the longest wait for a file to show
		want  string        // the last line on standard error
	}{
		{"demo plot", []string{"demo", "--plot", filepath.Join(dir, "demo.png")}, dir, time.Second,
			"demo interrupted: --plot " + filepath.Join(dir, "demo.png") + " not written"},
		{"model plots", []string{"privacy", "model", "--addresses", "200", "--monte-carlo", "1000000",
			"--plot", filepath.Join(dir, "leak.svg"), "--plot-j", filepath.Join(dir, "phj.png")}, dir, time.Second,
			"privacy model interrupted: --plot " + filepath.Join(dir, "leak.svg") + " and --plot-j " + filepath.Join(dir, "phj.png") + " not written"},
		{"lab plot", []string{"lab", "--vectors", "../../testvectors/bip158/testnet-19.json", "--plot", filepath.Join(dir, "lab.svg")}, dir, time.Second,
			"lab interrupted: --plot " + filepath.Join(dir, "lab.svg") + " not written"},
		{"simulate", []string{"privacy", "simulate", "--out", sim}, sim, 20 * time.Second,
			"privacy simulate interrupted: --out " + files(sim, simFiles...) + " not written"},
		{"simulate over an earlier one", []string{"privacy", "simulate", "--force", "--out", earlier}, earlier, 20 * time.Second,
			"privacy simulate interrupted: --out " + files(earlier, simFiles...) + " not written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := dirFiles(t, tc.watch)
			cmd, stderr, done := startMain(t, tc.args...)
			var err error
			exited := false
			for start := time.Now(); time.Since(start) < tc.wait; time.Sleep(time.Millisecond) {
				if writing(tc.watch, before) {
					break
				}
				select {
				case err = <-done:
					exited = true
				default:
				}
				if exited {
					break
				}
			}
			if exited {
				t.Fatalf("ended before the signal: %v; stderr %q", err, stderr.String())
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatalf("signal: %v; stderr %q", err, stderr.String())
			}
			endsInterrupted(t, cmd, done, 30*time.Second, stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if got := lines[len(lines)-1]; got != "spvfilter: "+tc.want {
				t.Errorf("stderr ends with %q, want %q", got, "spvfilter: "+tc.want)
			}
			after := dirFiles(t, tc.watch)
			for name, content := range after {
				if was, ok := before[name]; !ok {
					t.Errorf("%s left behind (%d bytes)", name, len(content))
				} else if was != content {
					t.Errorf("%s changed", name)
				}
			}
			for name := range before {
				if _, ok := after[name]; !ok {
					t.Errorf("%s removed", name)
				}
			}
		})
	}
}

// TestOutputsCommitAllOrNone checks that outputs.commit puts its files in
// place all or none: when one cannot be put at its path (a directory
// there now), the others' paths hold again what they held, an earlier
// file or nothing, and no temporary file is left.
func TestOutputsCommitAllOrNone(t *testing.T) {
	for _, tc := range []struct {
		name      string
		earlier   map[string]string // files at the paths before
		removed   string            // a file the commit removes
		blocked   string            // a path made a directory before the commit
		wantFiles map[string]string // after the commit
		wantErr   string
	}{
		{name: "all in place", earlier: map[string]string{"a": "old a"}, removed: "c",
			wantFiles: map[string]string{"a": "new a", "b": "new b"}},
		{name: "second blocked", blocked: "b",
			wantFiles: map[string]string{"b": "<dir>"}, wantErr: "--index DIR/b: a directory, not a file"},
		{name: "second blocked, first replacing", earlier: map[string]string{"a": "old a", "c": "old c"}, removed: "c", blocked: "b",
			wantFiles: map[string]string{"a": "old a", "b": "<dir>", "c": "old c"}, wantErr: "--index DIR/b: a directory, not a file"},
		{name: "first blocked", earlier: map[string]string{"b": "old b"}, blocked: "a",
			wantFiles: map[string]string{"a": "<dir>", "b": "old b"}, wantErr: "--out DIR/a: a directory, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.earlier {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var o outputs
			a, err := o.create("--out", filepath.Join(dir, "a"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := o.create("--index", filepath.Join(dir, "b"))
			if err != nil {
				t.Fatal(err)
			}
			files := []*pendingFile{a, b}
			if tc.removed != "" {
				files = append(files, o.remove("--out", filepath.Join(dir, tc.removed)))
			}
			a.Write([]byte("new a"))
			b.Write([]byte("new b"))
			if tc.blocked != "" {
				os.Remove(filepath.Join(dir, tc.blocked))
				if err := os.MkdirAll(filepath.Join(dir, tc.blocked, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := inDir(o.commit(files...), dir); got != tc.wantErr {
				t.Errorf("commit: %q, want %q", got, tc.wantErr)
			}
			got := dirFiles(t, dir)
			if len(got) != len(tc.wantFiles) {
				t.Errorf("files after the commit %v, want %v", got, tc.wantFiles)
			}
			for name, want := range tc.wantFiles {
				if got[name] != want {
					t.Errorf("%s: %q, want %q (all: %v)", name, got[name], want, got)
				}
			}
			wantUnwritten := 0
			if tc.wantErr != "" {
				wantUnwritten = 2
			}
			if n := len(o.unfinished().files); n != wantUnwritten {
				t.Errorf("%d files unwritten, want %d", n, wantUnwritten)
			}
		})
	}
}

// TestUniverseIndexNotPutInPlace runs privacy universe --out --index
// against a real btcd, through a proxy that holds the first block back
// until the test has made a directory of the --index path (as if another
// program had). The index then cannot be put in place: the command must
// fail naming --index, and leave no --out either (a universe beside no
// index, or beside an older one, would be read as a pair). Before, --out
// was put in place first and stayed.
func TestUniverseIndexNotPutInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	node := peertest.StartBtcd(t)
	node.Generate(t, 101)
	release := make(chan struct{})
	blockSeen := make(chan struct{})
	var once sync.Once
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok {
			once.Do(func() { close(blockSeen) })
			<-release
		}
		return []wire.Message{m}, false
	})
	dir := t.TempDir()
	out, index := filepath.Join(dir, "universe.txt"), filepath.Join(dir, "universe.idx")
	type result struct {
		stderr string
		status int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, status := runCLIInProcess("", "privacy", "universe", "--peer", proxy.Addr, "--network", "regtest", "--out", out, "--index", index)
		done <- result{stderr, status}
	}()
	select {
	case <-blockSeen:
	case r := <-done:
		close(release)
		t.Fatalf("ended before the download: status %d: %s", r.status, r.stderr)
	case <-time.After(60 * time.Second):
		close(release)
		t.Fatal("no block asked for in 60 s")
	}
	if err := os.MkdirAll(filepath.Join(index, "held"), 0o755); err != nil {
		t.Fatal(err)
	}
	close(release)
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("still running 60 s after the blocks were let through")
	}
	want := "spvfilter: --index " + index + ": a directory, not a file"
	if r.status != exitFailure || strings.TrimSpace(r.stderr) != want {
		t.Errorf("status %d, stderr %q; want status %d and %q", r.status, r.stderr, exitFailure, want)
	}
	got := dirFiles(t, dir)
	if len(got) != 1 || got["universe.idx"] != "<dir>" {
		t.Errorf("the directory holds %v, want the --index directory alone", keys(got))
	}
}

// keys are the names of files.
func keys(files map[string]string) []string {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	return names
}

// TestOutputsFollowLinks: an output path that is a symbolic link to a
// file is written where the link leads, as a file written in place would
// be, the link kept. Put in place by a rename, the file would otherwise
// take the link's place. A link to no file is refused
// (TestOutputDanglingLinkRefused).
func TestOutputsFollowLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chain bool // the link names another link, in a third directory
	}{
		{"to a file", false},
		{"to a link to a file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, real := t.TempDir(), t.TempDir()
			target := filepath.Join(real, "plot.svg")
			if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.chain {
				middle := filepath.Join(t.TempDir(), "middle.svg")
				if err := os.Symlink(target, middle); err != nil {
					t.Fatal(err)
				}
				target = middle
			}
			link := filepath.Join(dir, "plot.svg")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			var o outputs
			p, err := o.create("--plot", link)
			if err != nil {
				t.Fatal(err)
			}
			p.Write([]byte("new"))
			if err := o.commit(p); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link is gone: %v, %v", st, err)
			}
			if got := dirFiles(t, real); len(got) != 1 || got["plot.svg"] != "new" {
				t.Errorf("where the link leads: %v, want plot.svg alone, written", got)
			}
			if got := dirFiles(t, dir); len(got) != 1 {
				t.Errorf("beside the link: %v, want the link alone", keys(got))
			}
		})
	}
}

// TestOutputLinkToNoDirectory: an output path that is a symbolic link to
// a file in a directory that does not exist is bad input, said before
// the work, naming the link's target. Before, the check looked at the
// link's own directory, and the command failed (status 1) only once its
// work was done.
func TestOutputLinkToNoDirectory(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	link := filepath.Join(dir, "plot.svg")
	if err := os.Symlink(filepath.Join(gone, "plot.svg"), link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"demo", "--plot", link},
		{"privacy", "model", "--plot", link},
		{"lab", "--vectors", "../../testvectors/bip158/testnet-19.json", "--plot", link},
	} {
		_, stderr, status := runCLI(t, "", args...)
		want := "spvfilter: --plot " + link + ": a symbolic link to " + filepath.Join(gone, "plot.svg") + ", which does not exist: give the file's own path, or remove the link\n"
		if status != exitBadInput || stderr != want {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", args, status, stderr, exitBadInput, want)
		}
	}
}

// TestDashIsNoOutputFile: "-" given to a flag that names a file or a
// directory to write, and cannot write standard output, is bad input
// naming the flag, before any connection. Before, the command went on
// and wrote a file or directory named "-" (privacy simulate --out -
// wrote its five files into ./-), or failed on the node first.
func TestDashIsNoOutputFile(t *testing.T) {
	t.Chdir(t.TempDir()) // where a "-" would be made
	node := "127.0.0.1:1"
	addr := "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"privacy", "simulate", "--out", "-", "--wallets", "2", "--blocks", "10", "--fetch-wallets", "0", "--fetch-noise", "0"},
			"--out -: a directory to write the files into, not standard output (for one named -, write ./-)"},
		{[]string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "u.txt", "--index", "-"},
			"--index -: the index goes to a file, not to standard output (for a file named -, write ./-)"},
		{[]string{"lab", "--connect", node, "--network", "regtest", "--save-blocks", "-"},
			`--save-blocks "-": a block file, not standard output (for one named -, write ./-)`},
		{[]string{"scan", "--connect", node, "--network", "regtest", "--watch", addr, "--datadir", "-"},
			`--datadir "-": a directory, not standard output (for one named -, write ./-)`},
		{[]string{"peers", "--connect", node, "--network", "regtest", "--datadir=-"},
			`--datadir "-": a directory, not standard output (for one named -, write ./-)`},
	} {
		_, stderr, status := runCLI(t, "", tc.args...)
		if status != exitBadInput || stderr != "spvfilter: "+tc.want+"\n" {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", tc.args, status, stderr, exitBadInput, tc.want)
		}
		if _, err := os.Lstat("-"); err == nil {
			t.Errorf("%q: made a file or directory named -", tc.args)
			os.RemoveAll("-")
		}
	}
}

// TestWriteFailureLeavesNoFile runs commands whose output file cannot
// be written whole (the process may write no file beyond 100 kB, a full
// disk as the command sees it): each fails (status 1) naming its flag,
// its file and why, never the temporary file it wrote into, and leaves
// no file. Before, demo and lab left their plots cut short at 100 kB
// under the name given, and privacy simulate named its ".tmp" file.
func TestWriteFailureLeavesNoFile(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the file size limit with")
	}
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--plot", filepath.Join(dir, "demo.svg")}, "--plot " + filepath.Join(dir, "demo.svg") + ": file too large"},
		{[]string{"lab", "--vectors", "../../testvectors/bip158/testnet-19.json", "--probes", "10", "--timing", "0", "--plot", filepath.Join(dir, "lab.svg")},
			"--plot " + filepath.Join(dir, "lab.svg") + ": file too large"},
		{[]string{"privacy", "simulate", "--wallets", "3", "--blocks", "50", "--out", sim}, "--out " + filepath.Join(sim, "universe.txt") + ": file too large"},
	} {
		// 200 blocks of 512 or 1024 bytes, as the shell counts them.
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 200 && exec "$0" "$@"`, os.Args[0]}, tc.args...)...)
		cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || stderr.String() != "spvfilter: "+tc.want+"\n" {
			t.Errorf("%q: %v, stderr %q; want status %d and %q", tc.args, err, stderr.String(), exitFailure, tc.want)
		}
		for _, d := range []string{dir, sim} {
			for name := range dirFiles(t, d) {
				if name != "sim" {
					t.Errorf("%q: %s left in %s", tc.args, name, d)
				}
			}
		}
	}
}

// inDir is err's message with dir said DIR, "" for nil.
func inDir(err error, dir string) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), dir, "DIR")
}
