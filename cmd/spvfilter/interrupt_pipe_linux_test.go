package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptWritingPipe: Ctrl-C or SIGTERM ends a command writing its
// plot into a named pipe whose reader has had part of it and reads no
// more, with status 130 and the pipe named as interrupted (a file beside
// it as not written, its temporary file removed); the reader then sees
// the end of the pipe after the part it was given, not the whole plot.
// The signal comes once the pipe is full: the command is then blocked in
// the middle of its write (a plot is about 570 KB, a pipe holds 64 KiB),
// whatever the machine's speed.
func TestInterruptWritingPipe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		sig   syscall.Signal
		plotJ bool // a --plot-j file beside the pipe
		want  string
	}{
		{"demo, Ctrl-C", []string{"demo"}, syscall.SIGINT, false, "demo interrupted: --plot FIFO interrupted"},
		{"privacy model, SIGTERM, a file beside", []string{"privacy", "model", "--addresses", "20"}, syscall.SIGTERM, true,
			"privacy model interrupted: --plot-j DIR/phj.png not written; --plot FIFO interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "plot.svg")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// The reader is there before the command opens the pipe:
			// non-blocking to open without a writer, blocking to read.
			fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.SetNonblock(fd, false); err != nil {
				unix.Close(fd)
				t.Fatal(err)
			}
			reader := os.NewFile(uintptr(fd), fifo)
			defer reader.Close()
			args := append(tc.args, "--plot", fifo)
			if tc.plotJ {
				args = append(args, "--plot-j", filepath.Join(dir, "phj.png"))
			}
			cmd, stderr, done := startMain(t, args...)
			got := readSome(t, reader, fd, stderr)
			waitPipeFull(t, fd, stderr)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			endsInterrupted(t, cmd, done, 15*time.Second, stderr)
			want := "spvfilter: " + strings.NewReplacer("FIFO", fifo, "DIR", dir).Replace(tc.want)
			if got := strings.TrimSpace(stderr.String()); got != want {
				t.Errorf("stderr %q, want %q", got, want)
			}
			// The writer gone, the reader has the rest of the part
			// written, then the end of the pipe.
			rest, err := io.ReadAll(reader)
			if err != nil {
				t.Fatalf("reading the pipe after the exit: %v", err)
			}
			got = append(got, rest...)
			if !bytes.HasPrefix(got, []byte("<?xml")) && !bytes.HasPrefix(got, []byte("<svg")) {
				t.Errorf("the reader had %q..., want the opening of an SVG plot", got[:min(len(got), 40)])
			}
			if bytes.Contains(got, []byte("</svg>")) {
				t.Errorf("the reader had the whole plot (%d bytes), want a part cut off", len(got))
			}
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
				t.Errorf("%s holds %v (%v), want the pipe alone", dir, entries, err)
			}
		})
	}
}

// readSome reads from the pipe r (descriptor fd) what the command has
// written once it has written something, and no more: the first read
// that gives data, retried while no writer has opened the pipe yet.
func readSome(t *testing.T, r *os.File, fd int, stderr *lockedBuffer) []byte {
	t.Helper()
	buf := make([]byte, 4096)
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if n, err := unix.Read(fd, buf); n > 0 {
			return buf[:n]
		} else if err != nil && err != unix.EINTR {
			t.Fatalf("reading %s: %v", r.Name(), err)
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("nothing written into the pipe in 30s; stderr %q", stderr.String())
		}
	}
}

// waitPipeFull waits until the pipe of the descriptor fd holds as much as
// it can: its writer, with more to write, is then blocked in a write.
func waitPipeFull(t *testing.T, fd int, stderr *lockedBuffer) {
	t.Helper()
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		held, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD: the bytes the pipe holds
		if err != nil {
			t.Fatal(err)
		}
		if held >= size {
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the pipe holds %d of %d bytes after 30s; stderr %q", held, size, stderr.String())
		}
	}
}
