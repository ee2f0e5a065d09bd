//go:build unix

// Package oddfile puts faults in a file on disk for tests: a named pipe,
// a directory, a symbolic link to a file that never ends, a large sparse
// file, a file cut short or one of garbage; and measures how a reader of
// it fares (time taken, bytes allocated). A reader must meet each with
// an error or a note naming the file, never a hang or an allocation sized
// by the file.
package oddfile

import (
	"crypto/rand"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Fault is one kind of damage Make puts at a path.
type Fault int

// The faults. Truncated and Garbage need a file at the path (a valid one,
// as a run leaves it); the others replace whatever is there.
const (
	Pipe      Fault = iota // a named pipe, which blocks a reader until a writer comes
	Dir                    // an empty directory
	DevZero                // a symbolic link to /dev/zero, which never ends
	Sparse                 // a sparse file of 8 GiB, zeros
	Truncated              // the file there, cut to half its size
	Garbage                // the file there, its bytes random, its size kept
)

// Faults lists every fault, for a table test.
var Faults = []Fault{Pipe, Dir, DevZero, Sparse, Truncated, Garbage}

// SparseSize is the size of a Sparse file.
const SparseSize = 8 << 30

func (f Fault) String() string {
	switch f {
	case Pipe:
		return "named pipe"
	case Dir:
		return "directory"
	case DevZero:
		return "link to /dev/zero"
	case Sparse:
		return "sparse 8 GiB"
	case Truncated:
		return "truncated"
	case Garbage:
		return "garbage"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Make puts fault f at path. A reader blocked on a pipe is let go when
// the test ends.
func Make(t testing.TB, path string, f Fault) {
	t.Helper()
	switch f {
	case Truncated, Garbage:
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%v needs a file at %s: %v", f, path, err)
		}
		if f == Truncated {
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
			return
		}
		b := make([]byte, fi.Size())
		rand.Read(b)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	var err error
	switch f {
	case Pipe:
		if err = syscall.Mkfifo(path, 0o644); err == nil {
			t.Cleanup(func() {
				if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
		}
	case Dir:
		err = os.Mkdir(path, 0o755)
	case DevZero:
		err = os.Symlink("/dev/zero", path)
	case Sparse:
		var w *os.File
		if w, err = os.Create(path); err == nil {
			err = w.Truncate(SparseSize)
			w.Close()
		}
	default:
		err = fmt.Errorf("unknown %v", f)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Within is the time a reader is allowed (Measure), and MaxAlloc what it
// may allocate (Require), for a file of any size.
const (
	Within   = time.Second
	MaxAlloc = 16 << 20
)

// Result is what Measure saw of a reader.
type Result struct {
	Returned bool          // within the time allowed
	Took     time.Duration // until it returned, or the time allowed
	Alloc    uint64        // bytes allocated while it ran (whole process)
}

// MiB is Alloc in MiB.
func (r Result) MiB() float64 { return float64(r.Alloc) / (1 << 20) }

func (r Result) String() string {
	if !r.Returned {
		return fmt.Sprintf("no return within %v", r.Took)
	}
	return fmt.Sprintf("returned in %v, %.1f MiB allocated", r.Took.Round(time.Millisecond), r.MiB())
}

// Require fails the test, naming what read, if it did not return
// (fatally) or allocated MaxAlloc or more.
func (r Result) Require(t testing.TB, what string) {
	t.Helper()
	if !r.Returned {
		t.Fatalf("%s did not return within %v", what, r.Took)
	}
	if r.Alloc >= MaxAlloc {
		t.Errorf("%s allocated %.1f MiB: want under %d MiB", what, r.MiB(), MaxAlloc>>20)
	}
}

// Measure runs read, allowing it Within; a read that has not returned
// by then is left running (a pipe's reader is let go at the test's end,
// see Make).
func Measure(read func()) Result {
	type done struct {
		took  time.Duration
		alloc uint64
	}
	ch := make(chan done, 1)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		read()
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		ch <- done{took, after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case d := <-ch:
		return Result{Returned: true, Took: d.took, Alloc: d.alloc}
	case <-time.After(Within):
		return Result{Took: Within}
	}
}
