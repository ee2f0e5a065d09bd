package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// lockedOutputsEnv makes the test binary a process whose outputs' lock
// is held for ever, as by a commit stuck on a slow disk, watching for
// signals as a command does: it says "ready" on standard output, then
// waits.
const lockedOutputsEnv = "SPVFILTER_TEST_LOCKED_OUTPUTS"

func init() {
	if os.Getenv(lockedOutputsEnv) == "1" {
		a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
		a.outputs.mu.Lock()
		a.exitOnSignal("demo")
		fmt.Println("ready")
		select {}
	}
}

// TestInterruptLockHeld: a signal ends the process even while the
// outputs' lock is held and never given back: after signalLockWait, or
// at once on a second signal, with status 130 and "demo interrupted".
// Before, the handler waited for the lock for ever.
func TestInterruptLockHeld(t *testing.T) {
	for _, tc := range []struct {
		name    string
		second  bool
		longest time.Duration // from the last signal to the exit
	}{
		{"one signal", false, signalLockWait + 5*time.Second},
		{"a second signal", true, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), lockedOutputsEnv+"=1")
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for start := time.Now(); !strings.Contains(stdout.String(), "ready"); time.Sleep(10 * time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					cmd.Process.Kill()
					<-done
					t.Fatalf("not ready; stderr %q", stderr.String())
				}
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if tc.second {
				time.Sleep(300 * time.Millisecond)
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			last := time.Now()
			var err error
			select {
			case err = <-done:
			case <-time.After(tc.longest):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running %v after the last signal; stderr %q", tc.longest, stderr.String())
			}
			if !tc.second && time.Since(last) < signalLockWait-time.Second {
				t.Errorf("ended %v after the signal, before waiting %v for the lock", time.Since(last), signalLockWait)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("ended with %v, want exit status %d; stderr %q", err, exitInterrupted, stderr.String())
			}
			if got := strings.TrimSpace(stderr.String()); got != "spvfilter: demo interrupted" {
				t.Errorf("stderr %q, want %q", got, "spvfilter: demo interrupted")
			}
		})
	}
}

// TestInterruptOpeningPipe: Ctrl-C or SIGTERM ends a command whose output
// is a named pipe no one reads, waiting to open it, with status 130 and
// the pipe named as interrupted, a file beside it as not written (its
// temporary file removed). Before, the signal waited for the lock the
// opening held, and the process ran on, deaf to both signals; then the
// pipe was said "not written", as a file whose earlier contents are
// kept, though a pipe keeps nothing and a reader may have had part of
// it, and a file started after it went unnamed.
func TestInterruptOpeningPipe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		sig   syscall.Signal
		plotJ bool // a --plot-j file beside the pipe
		want  string
	}{
		{"demo, Ctrl-C", []string{"demo"}, syscall.SIGINT, false, "demo interrupted: --plot FIFO interrupted"},
		{"demo, SIGTERM", []string{"demo"}, syscall.SIGTERM, false, "demo interrupted: --plot FIFO interrupted"},
		{"privacy model, Ctrl-C", []string{"privacy", "model", "--addresses", "20"}, syscall.SIGINT, false, "privacy model interrupted: --plot FIFO interrupted"},
		{"privacy model, a file beside", []string{"privacy", "model", "--addresses", "20"}, syscall.SIGINT, true,
			"privacy model interrupted: --plot-j DIR/phj.png not written; --plot FIFO interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "plot.svg")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			args := append(tc.args, "--plot", fifo)
			if tc.plotJ {
				args = append(args, "--plot-j", filepath.Join(dir, "phj.png"))
			}
			cmd, stderr, done := startMain(t, args...)
			time.Sleep(time.Second) // waiting for a reader
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			endsInterrupted(t, cmd, done, 15*time.Second, stderr)
			want := "spvfilter: " + strings.NewReplacer("FIFO", fifo, "DIR", dir).Replace(tc.want)
			if got := strings.TrimSpace(stderr.String()); got != want {
				t.Errorf("stderr %q, want %q", got, want)
			}
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
				t.Errorf("%s holds %v (%v), want the pipe alone", dir, entries, err)
			}
		})
	}
}

// TestUnfinishedWords: an interruption names the files not written and
// the pipes or devices interrupted, each after its flag, a flag said
// once for the paths that follow it.
func TestUnfinishedWords(t *testing.T) {
	a, b := outputFile{"--plot", "a.svg"}, outputFile{"--plot-j", "b.png"}
	d1, d2 := outputFile{"--out", "d/1"}, outputFile{"--out", "d/2"}
	for _, tc := range []struct {
		u    unfinished
		want string
	}{
		{unfinished{}, ""},
		{unfinished{files: []outputFile{a}}, "--plot a.svg not written"},
		{unfinished{files: []outputFile{a, b}}, "--plot a.svg and --plot-j b.png not written"},
		{unfinished{files: []outputFile{d1, d2, a}}, "--out d/1, d/2 and --plot a.svg not written"},
		{unfinished{direct: []outputFile{a}}, "--plot a.svg interrupted"},
		{unfinished{files: []outputFile{b}, direct: []outputFile{a}}, "--plot-j b.png not written; --plot a.svg interrupted"},
	} {
		if got := tc.u.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.u, got, tc.want)
		}
	}
}

// TestOutputLinkResolvedPhysically: a relative symbolic link reached
// through a linked directory leads where the system resolves it, from the
// directory the link really is in. Before, its target was joined to the
// path as text, and the file was written beside the linked directory.
func TestOutputLinkResolvedPhysically(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "x", "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "w")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "sub"), filepath.Join(work, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../target.svg", filepath.Join(real, "sub", "out.svg")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "target.svg"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "d", "out.svg")
	if err := checkOutputFile("--plot", path); err != nil {
		t.Fatalf("checkOutputFile: %v", err)
	}
	var o outputs
	if err := writePlot(t, &o, path, "new"); err != nil {
		t.Fatal(err)
	}
	if got := dirFiles(t, real); got["target.svg"] != "new" || len(got) != 2 {
		t.Errorf("%s holds %v, want target.svg written beside sub", real, got)
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 1 {
		t.Errorf("%s holds %v (%v), want the link d alone", work, entries, err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v", err)
	}
}

// TestOutputDanglingLinkRefused: an output path that is a symbolic link
// to no file is bad input naming the flag and the link, before the work,
// and nothing is created where it points. Before, the file was created
// there: in a shared directory, where another user may plant such a
// link, with the rights of whoever ran the command.
func TestOutputDanglingLinkRefused(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.svg")
	link := filepath.Join(dir, "plot.svg")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	want := "spvfilter: --plot " + link + ": a symbolic link to " + victim + ", which does not exist: give the file's own path, or remove the link\n"
	for _, args := range [][]string{
		{"demo", "--plot", link},
		{"privacy", "model", "--addresses", "20", "--plot", link},
	} {
		_, stderr, status := runCLI(t, "", args...)
		if status != exitBadInput || stderr != want {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", args, status, stderr, exitBadInput, want)
		}
		if _, err := os.Lstat(victim); err == nil {
			t.Errorf("%q created %s", args, victim)
			os.Remove(victim)
		}
	}
	var o outputs
	if _, err := o.create("--plot", link); !isUsageError(err) {
		t.Errorf("create: %v, want bad input", err)
	}
}

// TestOutputMode: an output file gets the permissions the umask leaves of
// 0666, or, replacing a file, that file's own. Before, every file was
// made 0644: a plot, labels or a capture readable by all whatever the
// umask, and an earlier 0600 file widened.
func TestOutputMode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		umask   int
		earlier fs.FileMode // 0: no file before
		want    fs.FileMode
	}{
		{"new, umask 077", 0o077, 0, 0o600},
		{"new, umask 022", 0o022, 0, 0o644},
		{"replacing 0600, umask 022", 0o022, 0o600, 0o600},
		{"replacing 0640, umask 077", 0o077, 0o640, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plot.svg")
			if tc.earlier != 0 {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.earlier); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(os.Args[0], "demo", "--plot", path)
			cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
			old := syscall.Umask(tc.umask) // the child's, inherited
			out, err := cmd.CombinedOutput()
			syscall.Umask(old)
			if err != nil {
				t.Fatalf("demo: %v: %s", err, out)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != tc.want {
				t.Errorf("mode %#o, want %#o", got, tc.want)
			}
		})
	}
}

// TestOutputsReplaceAtomically: while outputs.commit replaces a file,
// again and again, the path always holds a whole file, the old or the
// new. Before, the old file was renamed aside before the new one was
// renamed in, and a reader between the two found no file.
func TestOutputsReplaceAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "labels.json")
	if err := os.WriteFile(path, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	var missing, looks atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			looks.Add(1)
			if _, err := os.Stat(path); err != nil {
				missing.Add(1)
			}
		}
	}()
	const commits = 300
	for i := range commits {
		var o outputs
		p, err := o.create("--labels", path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(p, i+1)
		if err := o.commit(p); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-watched
	if n := missing.Load(); n != 0 {
		t.Errorf("%d of %d looks at the path during %d commits found no file", n, looks.Load(), commits)
	}
	if got := dirFiles(t, dir); len(got) != 1 || got["labels.json"] != fmt.Sprint(commits) {
		t.Errorf("after the commits: %v, want labels.json alone holding %d", got, commits)
	}
}
