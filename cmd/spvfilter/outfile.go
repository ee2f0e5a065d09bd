package main

import (
	"os"
	"path/filepath"
)

// checkOutputFile refuses, before any work is done, an output file that
// cannot be created: a directory, or a file in a directory that does not
// exist. Either is bad input, in every command that writes a file. The
// name "-" (standard output) and "" (no file) pass.
func checkOutputFile(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return badInput("%s %s: a directory, not a file", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return badInput("%s %s: directory %s does not exist", flag, path, dir)
	}
	if !st.IsDir() {
		return badInput("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// refuseOverwrite refuses an output file that already exists unless
// --force is given: a command that replaces a file says so first.
func refuseOverwrite(flag, path string, force bool) error {
	if force || path == "" || path == "-" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return badInput("%s %s: the file exists (give --force to replace it)", flag, path)
	}
	return nil
}

// outputFile is a file a command writes, and the flag that names it.
type outputFile struct{ flag, path string }

// distinctOutputs refuses two flags of one command that name the same
// file to write (the second would replace what the first wrote), by
// name or, for files that exist, as the same file under two names. "-"
// (standard output) is the same as itself; "" names no file.
func distinctOutputs(files ...outputFile) error {
	for i, a := range files {
		for _, b := range files[:i] {
			if a.path != "" && b.path != "" && sameOutput(a.path, b.path) {
				return badInput("%s %s: the same file as %s", a.flag, a.path, b.flag)
			}
		}
	}
	return nil
}

// sameOutput reports whether the paths a and b name one file.
func sameOutput(a, b string) bool {
	if a == "-" || b == "-" {
		return a == b
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
