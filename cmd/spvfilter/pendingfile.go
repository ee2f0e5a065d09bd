package main

import (
	"os"
	"path/filepath"
)

// pendingFile is an output file written into a temporary file beside
// its path and put at the path by commit once whole, so that a command
// that fails or is interrupted half way leaves no file cut short (which
// a later command would read as whole) and nothing to refuse as existing
// when it runs again.
type pendingFile struct {
	flag, path string
	tmp        *os.File
	done       bool // committed, or its commit failed
}

// newPendingFile starts the file path, named by flag in errors.
func newPendingFile(flag, path string) (*pendingFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		// The temporary file's name is the tool's, not the user's.
		return nil, failureWords(flag+" "+path, writeProblem(err, filepath.Dir(path)))
	}
	return &pendingFile{flag: flag, path: path, tmp: tmp}, nil
}

// Write writes to the temporary file.
func (p *pendingFile) Write(b []byte) (int, error) { return p.tmp.Write(b) }

// commit puts the file, written whole, at its path, replacing what is
// there.
func (p *pendingFile) commit() error {
	p.done = true
	err := p.tmp.Chmod(0o644) // as a file the tool creates directly
	if err == nil {
		err = p.tmp.Sync()
	}
	if cerr := p.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.tmp.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.tmp.Name())
		return failureWords(p.flag+" "+p.path, err)
	}
	return nil
}

// abort removes the temporary file; after commit it does nothing.
func (p *pendingFile) abort() {
	if !p.done {
		p.tmp.Close()
		os.Remove(p.tmp.Name())
	}
}
