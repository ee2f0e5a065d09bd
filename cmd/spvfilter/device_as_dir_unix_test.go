//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDeviceOrPipeGivenAsDirectory: a device (/dev/null) or a named pipe
// given where a directory is wanted, or in the place of a directory above
// it, is named as what it is, not as a file. Before, privacy simulate
// --out /dev/null, scan --datadir /dev/null and the others said "a file,
// not a directory".
func TestDeviceOrPipeGivenAsDirectory(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Fatal(err)
	}
	fifo := makeFifo(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	scan := []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--datadir"}
	simulate := []string{"privacy", "simulate", "--out"}
	var rows []contractRow
	for _, tc := range []struct {
		path, what string
	}{
		{os.DevNull, "a device"},
		{fifo, "a named pipe"},
		{file, "a file"},
	} {
		rows = append(rows,
			contractRow{name: "simulate into " + tc.what, args: append(simulate[:len(simulate):len(simulate)], tc.path),
				status: exitBadInput, stderr: []string{"--out " + tc.path + ": " + tc.what + ", not a directory"}},
			contractRow{name: "simulate under " + tc.what, args: append(simulate[:len(simulate):len(simulate)], filepath.Join(tc.path, "sim")),
				status: exitBadInput, stderr: []string{"--out " + filepath.Join(tc.path, "sim") + ": " + tc.path + " is " + tc.what + ", not a directory"}},
			contractRow{name: "scan with " + tc.what + " as its data directory", args: append(scan[:len(scan):len(scan)], tc.path),
				status: exitBadInput, stderr: []string{"--datadir " + tc.path + ": " + tc.what + ", not a directory"}, notInErr: []string{"127.0.0.1:1"}},
			contractRow{name: "peers offline with " + tc.what + " as its data directory", args: []string{"peers", "--network", "regtest", "--datadir", tc.path},
				status: exitBadInput, stderr: []string{"--datadir " + tc.path + ": " + tc.what + ", not a directory"}},
		)
	}
	runRows(t, rows)
}
