//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// processUmask is the process's file mode creation mask, read once at
// startup (reading it means setting it, then setting it back, before any
// other goroutine creates a file).
var processUmask = readUmask()

func readUmask() fs.FileMode {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return fs.FileMode(mask) & fs.ModePerm
}
