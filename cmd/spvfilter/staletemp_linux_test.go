package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestSweepLeavesOutputUntouched: sweeping a killed process's second
// name of an output (removed) opens the output only for reading: a
// program watching it for writes (inotify IN_CLOSE_WRITE, as live
// reloading viewers do) sees none. Opened for writing, to lock it as
// NFS wants, it would look written.
func TestSweepLeavesOutputUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.svg")
	if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(dir, ".plot.svg.old.spvfilter-"+strconv.Itoa(deadPid(t))+".1")
	if err := os.Link(path, second); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_CLOSE_WRITE|syscall.IN_MODIFY); err != nil {
		t.Fatal(err)
	}
	s := sweepStale(path)
	if len(s.removed) != 1 {
		t.Fatalf("swept %+v, want the second name removed", s)
	}
	buf := make([]byte, 4096)
	if n, err := syscall.Read(fd, buf); n > 0 || !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("plot.svg, watched: read %d bytes of events (%v), want none", n, err)
	}
}
