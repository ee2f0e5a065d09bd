package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// pendingFile is an output file written into a temporary file beside
// its path and put at the path by outputs.commit once whole, so that a
// command that fails or is interrupted half way leaves no file cut short
// (which a later command would read as whole) and nothing to refuse as
// existing when it runs again. A pendingFile without a temporary file is
// a removal: its commit removes what is at its path.
type pendingFile struct {
	flag, path string
	// dest is where the file goes: path, or the file a symbolic link
	// at path names (the link is followed, as a file written in place
	// would follow it).
	dest string
	tmp  *os.File // nil for a removal
	// direct is set for a path that names no regular file but a device
	// or a pipe (/dev/full, a named pipe): tmp is then the path itself,
	// written in place, as nothing can be put in its place.
	direct bool
	state  pendingState
	// backup holds, while outputs.commit puts its files in place, the
	// file the path held before; placed says the new file is there.
	backup string
	placed bool
}

// pendingState is where a pendingFile stands.
type pendingState int

const (
	pending   pendingState = iota // being written
	committed                     // at its path
	abandoned                     // removed, or its commit failed
)

// outputs are the files a command writes, each a pendingFile. The lock
// makes an interrupt (exitOnSignal) wait for a commit under way, so that
// the files of a commit are all in place or none, and lets it remove the
// files not yet committed before the process exits.
type outputs struct {
	mu    sync.Mutex
	files []*pendingFile
}

// create starts the file path, named by flag in errors. Called before
// the command's long work, it also checks that the file can be created
// where it goes.
func (o *outputs) create(flag, path string) (*pendingFile, error) {
	files, err := o.createEach(outputFile{flag, path})
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// createEach starts the file of each of files that names one, nil for
// the others, in their order: all of them at once, as an interrupt sees
// them (it removes all, or comes after).
func (o *outputs) createEach(files ...outputFile) ([]*pendingFile, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	started := make([]*pendingFile, len(files))
	for i, f := range files {
		if f.path == "" {
			continue
		}
		p, err := startPending(f)
		if err != nil {
			return nil, err
		}
		started[i] = p
		o.files = append(o.files, p)
	}
	return started, nil
}

// startPending creates the temporary file of f beside where it goes.
func startPending(f outputFile) (*pendingFile, error) {
	p := &pendingFile{flag: f.flag, path: f.path, dest: destination(f.path)}
	if st, err := os.Stat(p.dest); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		tmp, err := os.OpenFile(p.path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, failureWords(f.flag+" "+f.path, writeProblem(err, ""))
		}
		p.tmp, p.direct = tmp, true
		return p, nil
	}
	// The extension kept, for writers that pick the format by it.
	dir, base := filepath.Split(p.dest)
	tmp, err := os.CreateTemp(filepath.Clean(dir), "."+base+".*"+filepath.Ext(base))
	if err != nil {
		// The temporary file's name is the tool's, not the user's.
		err = failureWords(f.flag+" "+f.path, writeProblem(err, filepath.Clean(dir)))
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			// A directory one may not write in, or that is gone: as
			// checkOutputFile says it, bad input.
			err = usageError{err}
		}
		return nil, err
	}
	p.tmp = tmp
	return p, nil
}

// destination is the file path names: path, or what the symbolic links
// at path lead to, existing or not (at most 40 links, as the system
// follows).
func destination(path string) string {
	for range 40 {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path
		}
		link, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return path
}

// remove makes the commit of the files it is given with also remove
// path, named by flag in errors: a file of an earlier run that would
// otherwise be taken for one of this run.
func (o *outputs) remove(flag, path string) *pendingFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pendingFile{flag: flag, path: path, dest: path}
	o.files = append(o.files, p)
	return p
}

// Write writes to the temporary file; an error does not name it (the
// temporary file's name is the tool's, not the user's).
func (p *pendingFile) Write(b []byte) (int, error) {
	n, err := p.tmp.Write(b)
	if err != nil {
		err = writeProblem(err, "")
	}
	return n, err
}

// writeNamed calls write with the temporary file's name, for a writer
// that creates the file it is given by name. An interrupt waits for it
// to return: removed while write opens it again, the temporary file
// would be left behind.
func (o *outputs) writeNamed(p *pendingFile, write func(name string) error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p.state != pending {
		return errors.New("written already")
	}
	name := p.tmp.Name()
	if p.direct {
		name = p.path // its name, which a writer may read the format from
	}
	err := write(name)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		err = writeProblem(err, "")
	}
	return err
}

// commit puts files, each written whole, at their paths (replacing what
// is there) or, for a removal, removes what is at its path (nil files
// are left out): all of them, or, when one cannot be, none, each path
// then holding what it held before. The error names the flag of the
// file that could not be put in place.
func (o *outputs) commit(given ...*pendingFile) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var files []*pendingFile // those given, nil left out
	for _, p := range given {
		if p != nil {
			files = append(files, p)
		}
	}
	for _, p := range files {
		if err := p.finish(); err != nil {
			o.abandon(files)
			return err
		}
	}
	for i, p := range files {
		if err := p.place(); err != nil {
			for _, q := range files[:i] {
				q.restore()
			}
			o.abandon(files)
			return err
		}
	}
	for _, p := range files {
		if p.backup != "" {
			os.Remove(p.backup)
			p.backup = ""
		}
		p.state = committed
	}
	return nil
}

// finish writes the temporary file through to the disk and closes it.
func (p *pendingFile) finish() error {
	if p.state != pending {
		return failureWords(p.flag+" "+p.path, errors.New("written already"))
	}
	if p.tmp == nil {
		return nil
	}
	if p.direct {
		if err := p.tmp.Close(); err != nil {
			return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
		}
		return nil
	}
	err := p.tmp.Chmod(0o644) // as a file the tool creates directly
	if err == nil {
		err = p.tmp.Sync()
	}
	if cerr := p.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
	}
	return nil
}

// place moves what is at the destination, other than a directory,
// aside as the backup, and puts the temporary file there.
func (p *pendingFile) place() error {
	if p.direct {
		return nil // written in place
	}
	if st, err := os.Lstat(p.dest); err == nil && !st.IsDir() {
		if err := p.moveAside(); err != nil {
			return err
		}
	}
	if p.tmp == nil {
		return nil
	}
	if err := os.Rename(p.tmp.Name(), p.dest); err != nil {
		p.restore()
		if st, serr := os.Stat(p.dest); serr == nil && st.IsDir() {
			// Made a directory since the command started.
			err = &restated{fileProblem(syscall.EISDIR), err}
		} else {
			err = pathProblem(err)
		}
		return failureWords(p.flag+" "+p.path, err)
	}
	p.placed = true
	return nil
}

// moveAside renames the file at the destination to a new name beside
// it, the backup.
func (p *pendingFile) moveAside() error {
	dir, base := filepath.Split(p.dest)
	f, err := os.CreateTemp(filepath.Clean(dir), "."+base+".old.*")
	if err != nil {
		return failureWords(p.flag+" "+p.path, writeProblem(err, filepath.Clean(dir)))
	}
	f.Close()
	if err := os.Rename(p.dest, f.Name()); err != nil {
		os.Remove(f.Name())
		return failureWords(p.flag+" "+p.path, pathProblem(err))
	}
	p.backup = f.Name()
	return nil
}

// restore undoes place: the destination holds again what it held
// before.
func (p *pendingFile) restore() {
	if p.placed {
		os.Remove(p.dest)
		p.placed = false
	}
	if p.backup != "" {
		os.Rename(p.backup, p.dest)
		p.backup = ""
	}
}

// abandon removes the temporary files of files; the caller holds o.mu.
func (o *outputs) abandon(files []*pendingFile) {
	for _, p := range files {
		if p != nil && p.state == pending && p.tmp != nil {
			p.tmp.Close()
			if !p.direct {
				os.Remove(p.tmp.Name())
			}
		}
		if p != nil && p.state == pending {
			p.state = abandoned
		}
	}
}

// abort removes the temporary file of p, unless committed.
func (o *outputs) abort(p *pendingFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.abandon([]*pendingFile{p})
}

// abortAll removes the temporary files of every file not committed.
func (o *outputs) abortAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.abandon(o.files)
}

// unwritten are the files started and not committed, removals left
// out: the files a failed or interrupted command did not write.
func (o *outputs) unwritten() []outputFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.unwrittenLocked()
}

func (o *outputs) unwrittenLocked() []outputFile {
	var files []outputFile
	for _, p := range o.files {
		if p.state != committed && p.tmp != nil {
			files = append(files, outputFile{p.flag, p.path})
		}
	}
	return files
}

// notWritten says which files were not written, each after its flag
// ("--plot a.svg and --plot-j b.svg not written", "--out d/a, d/b not
// written"), or "" for none.
func notWritten(files []outputFile) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	for i, f := range files {
		switch {
		case i == 0:
		case f.flag == files[i-1].flag:
			b.WriteString(", ")
		case i == len(files)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		if i == 0 || f.flag != files[i-1].flag {
			b.WriteString(f.flag + " ")
		}
		b.WriteString(f.path)
	}
	return b.String() + " not written"
}

// pathProblem is err of a rename said without the paths (a temporary
// file's name is the tool's, not the user's).
func pathProblem(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return &restated{fileProblem(le.Err), err}
	}
	return writeProblem(err, "")
}
