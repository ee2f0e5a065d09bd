//go:build !unix

package main

import (
	"os"
	"time"
)

// abandonedAge is how old a hidden file must be for removeAbandoned to
// take it for one a killed process left, where whether its process runs
// cannot be asked.
const abandonedAge = 24 * time.Hour

// removeAbandoned removes the hidden file path when it was last written
// abandonedAge ago or earlier (leftBehind), and reports whether it did.
func removeAbandoned(path string, pid int) bool {
	return leftBehind(path, pid) && os.Remove(path) == nil
}

// leftBehind reports whether the hidden file path was last written
// abandonedAge ago or earlier. The process id it carries is not looked
// at: there is no signal 0 to ask the system whether that process runs.
func leftBehind(path string, _ int) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) >= abandonedAge
}

// holdTemp does nothing where files are not locked.
func holdTemp(*os.File) {}
