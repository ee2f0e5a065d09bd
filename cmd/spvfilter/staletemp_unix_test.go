//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadPid is the process id of a process that ran and has ended: this
// test binary run again to do nothing, waited for.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d, ended, still answers: %v", pid, err)
	}
	return pid
}

// TestSweepStale: starting an output removes the hidden files beside it
// that an ended process left, the new file's, and the earlier file's
// when it is the output itself under a second name, and names them in
// one line; an earlier file holding anything else it names but keeps
// (the only copy of a file the output held before). It leaves unnamed
// those of this process and of a process that runs (this test's
// parent), one an ended process's that a process holds locked (as a
// writer in another pid namespace holds its own), other outputs' and
// other files.
func TestSweepStale(t *testing.T) {
	dead, live, own := deadPid(t), os.Getppid(), os.Getpid()
	for _, tc := range []struct {
		name        string
		outputThere bool
		files       []string // beside plot.svg, DEAD, LIVE, OWN made pids
		linked      []string // beside plot.svg, second names of it
		locked      string   // one of files, held locked while the sweep runs
		want        swept
	}{
		{name: "an ended process's", outputThere: true,
			files:  []string{".plot.svg.spvfilter-DEAD.1.svg", ".plot.svg.spvfilter-DEAD.3.svg", ".plot.svg.old.spvfilter-DEAD.2"},
			linked: []string{".plot.svg.old.spvfilter-DEAD.4"},
			want:   swept{removed: []string{".plot.svg.old.spvfilter-DEAD.4", ".plot.svg.spvfilter-DEAD.1.svg", ".plot.svg.spvfilter-DEAD.3.svg"}, kept: []string{".plot.svg.old.spvfilter-DEAD.2"}}},
		{name: "running processes'", outputThere: true,
			files:  []string{".plot.svg.spvfilter-LIVE.1.svg", ".plot.svg.old.spvfilter-LIVE.2", ".plot.svg.spvfilter-OWN.3.svg", ".plot.svg.old.spvfilter-OWN.4"},
			linked: []string{".plot.svg.old.spvfilter-LIVE.5", ".plot.svg.old.spvfilter-OWN.6"}},
		{name: "held locked", outputThere: true,
			files: []string{".plot.svg.spvfilter-DEAD.1.svg"}, locked: ".plot.svg.spvfilter-DEAD.1.svg"},
		{name: "the output missing",
			files: []string{".plot.svg.spvfilter-DEAD.1.svg", ".plot.svg.old.spvfilter-DEAD.2"},
			want:  swept{removed: []string{".plot.svg.spvfilter-DEAD.1.svg"}, kept: []string{".plot.svg.old.spvfilter-DEAD.2"}}},
		{name: "others", outputThere: true,
			files: []string{".other.svg.spvfilter-DEAD.1.svg", ".plot.svg.spvfilter-DEAD.2.png", ".plot.svg.1234.svg", ".plot.svg.old.1234", "plot.svg.DEAD.3.svg", ".spvfilter-probe-DEAD", ".plot.svg.DEAD.5.svg", ".plot.svg.old.DEAD.6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "plot.svg")
			if tc.outputThere {
				if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pids := strings.NewReplacer("DEAD", strconv.Itoa(dead), "LIVE", strconv.Itoa(live), "OWN", strconv.Itoa(own))
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, pids.Replace(f)), []byte(f), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.linked {
				if err := os.Link(path, filepath.Join(dir, pids.Replace(f))); err != nil {
					t.Fatal(err)
				}
			}
			if tc.locked != "" {
				f, err := os.Open(filepath.Join(dir, pids.Replace(tc.locked)))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := lockFile(f, syscall.LOCK_EX); err != nil {
					t.Fatal(err)
				}
			}
			want := dirFiles(t, dir)
			var notes strings.Builder
			o := outputs{notes: &notes}
			p, err := o.create("--plot", path)
			if err != nil {
				t.Fatal(err)
			}
			o.abort(p)
			var wantSwept swept
			for _, f := range tc.want.removed {
				wantSwept.removed = append(wantSwept.removed, pids.Replace(f))
				delete(want, pids.Replace(f))
			}
			for _, f := range tc.want.kept {
				wantSwept.kept = append(wantSwept.kept, pids.Replace(f))
			}
			if got := dirFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after the sweep %v, want %v", keys(got), keys(want))
			}
			wantNote := ""
			if line := wantSwept.String(); line != "" {
				wantNote = "--plot " + path + ": " + line + "\n"
			}
			if notes.String() != wantNote {
				t.Errorf("said %q, want %q", notes.String(), wantNote)
			}
		})
	}
}

// TestSweepAfterKill: spvfilter killed outright (SIGKILL) while it
// writes a plot leaves its hidden file; the next command that writes
// that plot removes it and names it, and leaves the hidden file of
// another spvfilter writing the same plot at the same time, which Ctrl-C
// then ends, its file removed. Before, the killed one's file stayed for
// ever.
func TestSweepAfterKill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.svg")
	// Minutes of Monte Carlo trials, the plot's file started first.
	long := []string{"privacy", "model", "--addresses", "200", "--monte-carlo", "1000000", "--plot", path}
	killed, killedTemp := startWriting(t, dir, long)
	other, otherTemp := startWriting(t, dir, long)
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Wait()
	if _, err := os.Stat(filepath.Join(dir, killedTemp)); err != nil {
		t.Fatalf("the killed process's hidden file is not there: %v", err)
	}
	_, stderr, status := runCLI(t, "", "privacy", "model", "--addresses", "200", "--plot", path)
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	wantNote := "spvfilter: --plot " + path + ": removed the hidden file " + killedTemp + ", left beside it by a process killed while it wrote it\n"
	if stderr != wantNote {
		t.Errorf("stderr %q, want %q", stderr, wantNote)
	}
	got := dirFiles(t, dir)
	if _, ok := got[otherTemp]; !ok || len(got) != 2 || !strings.Contains(got["plot.svg"], "<svg") {
		t.Errorf("after the write %v, want plot.svg and %s, the running process's", keys(got), otherTemp)
	}
	// The other process ends as Ctrl-C ends it, its file removed.
	if err := other.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	other.Wait()
	if got := dirFiles(t, dir); len(got) != 1 {
		t.Errorf("after all ended %v, want plot.svg alone", keys(got))
	}
}

// startWriting starts this test binary as spvfilter with args, which
// write a file in dir, and returns it once its hidden file is there,
// and that file's name. The process is killed when the test ends.
func startWriting(t *testing.T, dir string, args []string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(10 * time.Millisecond) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if kind, pid := parseTemp("plot.svg", e.Name()); kind == tempWritten && pid == cmd.Process.Pid {
				return cmd, e.Name()
			}
		}
	}
	t.Fatalf("no hidden file of process %d in %s after 30 s", cmd.Process.Pid, dir)
	return nil, ""
}

// TestPendingHeldLocked: a writer's hidden files stay locked for as long
// as they are its own, up to the rename that puts the new file in
// place: the new file's, closed once written, and the earlier file's,
// a second name of the output until that rename. Unlocked, a command
// in another pid namespace (where this process's id names none) would
// take them for a killed process's: remove the new file before it is
// renamed in (the commit then fails), or remove the earlier file just
// as the rename makes it the only copy of what the output held (which
// a failed commit then cannot put back).
func TestPendingHeldLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.svg")
	if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o outputs
	var checked int
	o.ops.rename = func(oldname, newname string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if kind, _ := parseTemp("plot.svg", e.Name()); kind == notTemp {
				continue
			}
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			f.Close()
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				t.Errorf("%s, as %s is renamed in: locked by another, %v; want EWOULDBLOCK", e.Name(), oldname, err)
			}
			checked++
		}
		return os.Rename(oldname, newname)
	}
	if err := writePlot(t, &o, path, "new"); err != nil {
		t.Fatal(err)
	}
	if checked != 2 {
		t.Errorf("%d hidden files as the new file is renamed in, want 2 (new, earlier)", checked)
	}
	if got := dirFiles(t, dir); len(got) != 1 || got["plot.svg"] != "new" {
		t.Errorf("after the commit %v, want plot.svg alone, new", got)
	}
	// Nothing of the commit still holds the output locked.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f, syscall.LOCK_EX); err != nil {
		t.Errorf("plot.svg after the commit: %v, want it unlocked", err)
	}
}

// TestSweepOtherNamespace: spvfilter writing a plot in another pid
// namespace (a container sharing the directory), where this process's
// id names no process, as this one puts the same plot in place, leaves
// this one's hidden files, which it holds locked: this commit succeeds,
// and the other names nothing. Before, this one's new file, closed once
// written, was unlocked until renamed in: the other removed it, as a
// killed process's, and this commit failed. It needs a pid namespace
// (unshare, as root).
func TestSweepOtherNamespace(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command(unshare, "--pid", "--fork", "true").Run(); err != nil {
		t.Skipf("no pid namespace: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.svg")
	if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o outputs
	var stderr strings.Builder
	o.ops.rename = func(oldname, newname string) error {
		cmd := exec.Command(unshare, "--pid", "--fork", os.Args[0], "privacy", "model", "--addresses", "200", "--plot", path)
		cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("the other spvfilter: %v, stderr %q", err, stderr.String())
		}
		return os.Rename(oldname, newname)
	}
	if err := writePlot(t, &o, path, "new"); err != nil {
		t.Errorf("commit: %v", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("the other spvfilter said %q, want nothing", stderr.String())
	}
	if got := dirFiles(t, dir); len(got) != 1 || got["plot.svg"] != "new" {
		t.Errorf("after both %v, want plot.svg alone, new", keys(got))
	}
}

// TestPendingHoldTemp: a hidden file just made is held only when this
// process locks it and it is still at its name: a sweep in another pid
// namespace may have claimed it first (it holds it locked, to remove
// it) or removed it already.
func TestPendingHoldTemp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, name string) // what a sweep did first
		held   bool
	}{
		{"untouched", func(*testing.T, string) {}, true},
		{"claimed", func(t *testing.T, name string) {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := lockFile(f, syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"removed", func(t *testing.T, name string) {
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"removed and made again", func(t *testing.T, name string) {
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.CreateTemp(t.TempDir(), tempPattern("plot.svg", tempWritten, os.Getpid()))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tc.before(t, f.Name())
			if got := holdTemp(f); got != tc.held {
				t.Errorf("holdTemp = %v, want %v", got, tc.held)
			}
		})
	}
}

// TestSweepLockAnswers: a sweep removes a hidden file only when it
// locked it or the file system has no locks; any other answer leaves the
// file. Over NFS, flock is an fcntl lock on the whole file, and an
// exclusive one on a file opened only for reading fails with EBADF
// (flock(2), NOTES): taken for a file system without locks, it let a
// sweep on one machine remove the files another machine's spvfilter was
// writing, where the process id says nothing.
func TestSweepLockAnswers(t *testing.T) {
	for _, tc := range []struct {
		err  error
		free bool
	}{
		{nil, true},
		{syscall.ENOLCK, true},
		{syscall.EOPNOTSUPP, true},
		{syscall.ENOSYS, true},
		{syscall.EWOULDBLOCK, false},
		{syscall.EINTR, false},
		{syscall.EBADF, false},
		{syscall.EIO, false},
		{fmt.Errorf("flock: %w", syscall.EWOULDBLOCK), false},
	} {
		if got := lockFree(tc.err); got != tc.free {
			t.Errorf("lockFree(%v) = %v, want %v", tc.err, got, tc.free)
		}
	}
}

// TestPendingEarlierUnopened: an output whose earlier file this process
// cannot open to lock (one it may write but not read, run as another
// than root; a symbolic link put at the path while the command ran) is
// replaced all the same, its second name kept unlocked, and no hidden
// file left. Before, each name given was taken for one a sweep had
// removed: ten of them were left, and the commit failed.
func TestPendingEarlierUnopened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string) // made while the command runs
	}{
		{"write only", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o200); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symbolic link", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other")
			if err := os.WriteFile(other, []byte("other"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("other", path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "plot.svg")
			if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
				t.Fatal(err)
			}
			var o outputs
			p, err := o.create("--plot", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Write([]byte("new")); err != nil {
				t.Fatal(err)
			}
			tc.change(t, path)
			if err := o.commit(p); err != nil {
				t.Errorf("commit: %v", err)
			}
			for name := range dirFiles(t, dir) {
				if kind, _ := parseTemp("plot.svg", name); kind != notTemp {
					t.Errorf("%s left", name)
				}
			}
		})
	}
}
