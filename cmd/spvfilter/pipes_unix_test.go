//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// pipeRun is what a command run beside a test returned.
type pipeRun struct {
	stdout, stderr string
	status         int
}

// runWithin runs the command args in-process and fails the test when it
// has not returned within limit: a command that waits on a named pipe
// fifo hangs instead of answering. A hung command is then freed (fifo is
// opened and closed at both ends) so that it does not outlive the test.
func runWithin(t *testing.T, limit time.Duration, fifo string, args ...string) pipeRun {
	t.Helper()
	done := make(chan pipeRun, 1)
	go func() {
		stdout, stderr, status := runCLIInProcess("", args...)
		done <- pipeRun{stdout, stderr, status}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		for range 3 {
			if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
				f.Close()
			}
			select {
			case <-done:
				t.Fatalf("%s: no answer within %v (waited on the named pipe)", strings.Join(args, " "), limit)
			case <-time.After(time.Second):
			}
		}
		t.Fatalf("%s: no answer within %v, and still waiting", strings.Join(args, " "), limit)
		return pipeRun{}
	}
}

// readFifo starts the reader of the named pipe fifo: one that holds it
// open from now (a non-blocking opening returns at once), so that a
// writer's opening finds it read, and one that reads until the writer
// closes it; the channel gets what was read (or the opening's error).
func readFifo(t *testing.T, fifo string) <-chan string {
	t.Helper()
	hold, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Close() })
	read := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			read <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		read <- string(b)
	}()
	return read
}

// makeFifo makes a named pipe in a directory of the test's.
func makeFifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInputFilePipes: an input file that is a named pipe is read once;
// bad content in it is refused at once naming the flag and the file, and
// what it holds (told from what was read), as the same content in a
// regular file is. Before, the commands opened the file a second time to
// tell its kind and waited for a writer that never came.
func TestInputFilePipes(t *testing.T) {
	dir := t.TempDir()
	universe := filepath.Join(dir, "universe.txt")
	index := filepath.Join(dir, "universe.idx")
	fetches := filepath.Join(dir, "fetches.jsonl")
	zero := strings.Repeat("0", 64)
	for path, body := range map[string]string{
		universe: "2ND8PB9RrfCaAcjfjP1Y6nAgFd9zWHYX4DN\n",
		index:    "not read\n",
		fetches:  `{"client":"127.0.0.1:5","session":"s-1","command":"getdata","blocks":[{"hash":"` + zero + `","type":"witness_block"}]}` + "\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const garbage = "this is no file of spvfilter\n"
	const report = `{"clients": []}` + "\n"
	reportWords := []string{"a report of privacy analyze or fetches", "privacy evaluate --report"}
	for _, tc := range []struct {
		name string
		args []string // the pipe's flag last
		body string
		want []string
	}{
		{"analyze capture garbage", []string{"privacy", "analyze", "--universe", universe, "--capture"}, garbage, []string{"line 1"}},
		{"analyze capture report", []string{"privacy", "analyze", "--universe", universe, "--capture"}, report, reportWords},
		{"fetches capture garbage", []string{"privacy", "fetches", "--index", index, "--capture"}, garbage, []string{"line 1"}},
		{"fetches capture report", []string{"privacy", "fetches", "--index", index, "--capture"}, report, reportWords},
		{"analyze universe report", []string{"privacy", "analyze", "--filter", corePayload, "--universe"}, report, reportWords},
		{"fetches index garbage", []string{"privacy", "fetches", "--capture", fetches, "--index"}, garbage, []string{"not an appearance index"}},
		{"fetches index report", []string{"privacy", "fetches", "--capture", fetches, "--index"}, report, reportWords},
		{"fetches index empty", []string{"privacy", "fetches", "--capture", fetches, "--index"}, "", []string{"empty"}},
		{"lab blocks report", []string{"lab", "--probes", "1000", "--timing", "0", "--blocks"}, report, reportWords},
		{"lab blocks empty", []string{"lab", "--probes", "1000", "--timing", "0", "--blocks"}, "", []string{"empty"}},
		{"lab vectors report", []string{"lab", "--probes", "1000", "--timing", "0", "--vectors"}, report, reportWords},
		{"lab vectors block file", []string{"lab", "--probes", "1000", "--timing", "0", "--vectors"}, blockFileOpening + "1\n", []string{"a block file of lab --save-blocks", "give it to --blocks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := makeFifo(t)
			wrote := make(chan error, 1)
			go func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					_, err = io.WriteString(f, tc.body)
					f.Close()
				}
				wrote <- err
			}()
			r := runWithin(t, 10*time.Second, fifo, append(tc.args, fifo)...)
			if err := <-wrote; err != nil {
				t.Fatalf("writing the pipe: %v", err)
			}
			flag := tc.args[len(tc.args)-1]
			if r.status != exitBadInput || !strings.Contains(r.stderr, flag+" "+fifo) {
				t.Fatalf("status %d, stderr %q: want %d naming %s %s", r.status, r.stderr, exitBadInput, flag, fifo)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
}

// TestCaptureOutPipe: privacy capture --out a named pipe streams into a
// pipe whose reader is running, and refuses at once, naming --out, a pipe
// no process reads. Before, capture opened the pipe to read back what it
// held and waited, with or without a reader, saying nothing.
func TestCaptureOutPipe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reader bool
		status int
		want   string
	}{
		{"reader", true, exitOK, ""},
		{"no reader", false, exitBadInput, "no process reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := startVersionAnswerer(t)
			fifo := makeFifo(t)
			var read <-chan string
			if tc.reader {
				read = readFifo(t, fifo)
			}
			r := runWithin(t, 10*time.Second, fifo, "privacy", "capture", "--listen", freeLoopbackAddr(t), "--upstream", up,
				"--network", "regtest", "--out", fifo, "--duration", "300ms")
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.stderr)
			}
			if tc.want != "" && (!strings.Contains(r.stderr, "--out "+fifo) || !strings.Contains(r.stderr, tc.want)) {
				t.Errorf("stderr %q: want --out %s and %q", r.stderr, fifo, tc.want)
			}
			if tc.reader {
				select {
				case got := <-read:
					if got != "" {
						t.Errorf("the reader got %q, want nothing (no client connected)", got)
					}
				case <-time.After(5 * time.Second):
					t.Error("the reader was not given the end of the stream")
				}
			}
		})
	}
}

// TestSaveBlocksOddFiles: lab --save-blocks given a named pipe streams
// the block file into it when its reader is running, and refuses at once,
// naming --save-blocks, a pipe no process reads (it waited for a reader
// for ever, saying nothing); a device, or a link to one, which keeps no
// block file to read back, and a directory are refused before connecting.
// Before, a link to /dev/zero took the blocks and lost them, exit 0.
func TestSaveBlocksOddFiles(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.blocks")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		path   func(t *testing.T) string
		reader bool
		status int
		want   string
	}{
		{"pipe with its reader", makeFifo, true, exitOK, ""},
		{"pipe no process reads", makeFifo, false, exitBadInput, ": a named pipe that no process reads: start its reader first"},
		{"link to /dev/zero", func(*testing.T) string { return zero }, false, exitBadInput, ": a link to the device /dev/zero, not a file: the blocks written there could not be read back with lab --blocks"},
		{"/dev/null", func(*testing.T) string { return os.DevNull }, false, exitBadInput, ": a device, not a file"},
		{"directory", func(*testing.T) string { return dir }, false, exitBadInput, ": a directory, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			var read <-chan string
			if tc.reader {
				read = readFifo(t, path)
			}
			r := runWithin(t, 20*time.Second, path, "lab", "--connect", node.P2PAddr, "--network", "regtest", "--probes", "0", "--timing", "0", "--save-blocks", path)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.stderr)
			}
			if tc.want != "" && !strings.Contains(r.stderr, "--save-blocks "+path+tc.want) {
				t.Errorf("stderr %q\nwant --save-blocks %s%s", r.stderr, path, tc.want)
			}
			if !tc.reader {
				return
			}
			select {
			case got := <-read:
				blocks := filepath.Join(t.TempDir(), "read.blocks")
				if err := os.WriteFile(blocks, []byte(got), 0o600); err != nil {
					t.Fatal(err)
				}
				doc := runLabJSON(t, "--blocks", blocks, "--probes", "0", "--timing", "0")
				if doc.BlockCount != 4 {
					t.Errorf("the reader's block file holds %d blocks, want 4 (genesis and 3 mined)", doc.BlockCount)
				}
			case <-time.After(10 * time.Second):
				t.Error("the reader was not given the end of the block file")
			}
		})
	}
}

// TestUniverseIndexOnDevice: privacy universe --index given a device, or
// a link to one, is refused before connecting, naming --index and what to
// give, with --force too: an index is written to be read back by privacy
// fetches. Before, it was "the file exists (give --force to replace it)",
// and with --force the index went into the device.
func TestUniverseIndexOnDevice(t *testing.T) {
	zero := filepath.Join(t.TempDir(), "zero.idx")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
		force            bool
	}{
		{"link to /dev/zero", zero, ": a link to the device /dev/zero, not a file: the index written there could not be read back with privacy fetches --index (give a file)", false},
		{"/dev/null with --force", os.DevNull, ": a device, not a file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(t.TempDir(), "u.txt"), "--index", tc.path}
			if tc.force {
				args = append(args, "--force")
			}
			_, stderr, status := runCLI(t, "", args...)
			if status != exitBadInput || !strings.Contains(stderr, "--index "+tc.path+tc.want) {
				t.Errorf("status %d, stderr %q\nwant %d and --index %s%s", status, stderr, exitBadInput, tc.path, tc.want)
			}
		})
	}
}
