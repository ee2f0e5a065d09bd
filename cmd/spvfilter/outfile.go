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
