package diskfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomic: a write replaces the file whole and leaves no
// temporary file, with or without sync.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for i, sync := range []bool{true, false, true} {
		want := []byte{byte(i), 'x'}
		if err := WriteAtomic(path, want, sync); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Fatalf("write %d: %q, %v", i, got, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("write %d: the directory holds %d entries", i, len(entries))
		}
	}
	if err := WriteAtomic(filepath.Join(dir, "missing", "f"), nil, false); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
}

// TestWriteAtomicMode: the file gets the permissions asked for, even
// over a temporary file a crash left with others.
func TestWriteAtomicMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path+".tmp", []byte("left by a crash"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomicMode(path, []byte("x"), true, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("permissions %v, want 0600", perm)
	}
}

// TestReadLimited: a file within the bound is read whole; one beyond it,
// a directory and a missing file are errors callers can tell apart.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadLimited(path, 5); err != nil || string(got) != "12345" {
		t.Fatalf("within the bound: %q, %v", got, err)
	}
	if _, err := ReadLimited(path, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("beyond the bound: %v", err)
	}
	if _, err := ReadLimited(dir, 10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := ReadLimited(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
