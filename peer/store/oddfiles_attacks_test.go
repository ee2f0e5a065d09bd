//go:build unix

package store

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOddFilesInTheStore: a data directory whose small files (the
// store's identity file, the filter cache's clean-close record, the
// record logs) are a named pipe, which blocks its reader until a writer
// comes, or a large sparse file, which a whole read allocates. A fault
// in a file on disk is an error naming the file, or a note, never a
// hang or an allocation sized by the file: Open must return within
// five seconds and allocate under 16 MiB, a file of 256 MiB or 8 GiB
// there. Before, each pipe blocked Open (5 s and more, until the test
// wrote to it), an identity file of 256 MiB kept it more than 5 s (the
// error quoted the file whole), a clean-close record of 256 MiB cost
// 1,038 MiB, and a header file of 8 GiB (zeros) 410 MiB, reserved
// for its size before its first record was read.
func TestOddFilesInTheStore(t *testing.T) {
	const (
		big      = 256 << 20
		maxAlloc = 16 << 20
		within   = 5 * time.Second
	)
	tests := []struct {
		name  string
		file  string // under the network's directory
		pipe  bool   // a named pipe, else a sparse file of size bytes (big if 0)
		size  int64
		fails bool // Open fails, naming the file; else it opens
	}{
		{"identity file a pipe", metaFile, true, 0, true},
		{"identity file of 256 MiB", metaFile, false, 0, true},
		{"clean-close record a pipe", filepath.Join(FiltersDir, filterCacheFile+cleanSuffix), true, 0, false},
		{"clean-close record of 256 MiB", filepath.Join(FiltersDir, filterCacheFile+cleanSuffix), false, 0, false},
		{"headers a pipe", HeadersFile, true, 0, true},
		{"filter headers a pipe", FilterHeadersFile, true, 0, true},
		// Zeros from the first record: cut, the store opened empty.
		{"headers of 8 GiB", HeadersFile, false, 8 << 30, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			dir := filepath.Join(data, regtest.Name)
			path := filepath.Join(dir, tt.file)
			// A store as a run leaves it: its identity file and, closed
			// cleanly, its filter cache.
			s, err := Open(data, regtest)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if tt.pipe {
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
				// Whatever Open does, a reader blocked on the pipe is let
				// go when the test ends.
				t.Cleanup(func() {
					if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				})
			} else {
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				size := tt.size
				if size == 0 {
					size = big
				}
				if err := f.Truncate(size); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			type opened struct {
				s     *Store
				err   error
				alloc uint64
			}
			done := make(chan opened, 1)
			go func() {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				s, err := Open(data, regtest)
				runtime.ReadMemStats(&after)
				done <- opened{s, err, after.TotalAlloc - before.TotalAlloc}
			}()
			var o opened
			select {
			case o = <-done:
			case <-time.After(within):
				t.Fatalf("Open did not return within %v of a %s", within, tt.name)
			}
			if o.s != nil {
				t.Logf("opened; recovered %q", o.s.Recovered())
				o.s.Close()
			}
			t.Logf("error %v; allocated %.1f MiB", o.err, float64(o.alloc)/(1<<20))
			if o.alloc > maxAlloc {
				t.Errorf("Open allocated %.1f MiB for a %s: want under %d MiB", float64(o.alloc)/(1<<20), tt.name, maxAlloc>>20)
			}
			if !tt.fails && o.s != nil && len(o.s.Recovered()) == 0 && !tt.pipe && tt.file == HeadersFile {
				t.Errorf("the header file cut, and no note says so")
			}
			if tt.fails && (o.err == nil || !strings.Contains(o.err.Error(), filepath.Base(tt.file))) {
				t.Errorf("error %v: want one naming %s", o.err, tt.file)
			}
			if !tt.fails && o.err != nil {
				t.Errorf("error %v: a cache's hint is no reason to fail", o.err)
			}
		})
	}
}
