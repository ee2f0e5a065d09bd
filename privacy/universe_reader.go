package privacy

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// LineError names the universe line an error is about.
type LineError struct {
	Line int // 1-based
	Err  error
}

// Error names the line.
func (e *LineError) Error() string { return fmt.Sprintf("universe line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// chunkSize is the block of input one worker parses at a time; a chunk
// always ends at a line end, so it also bounds the line length.
const chunkSize = 256 << 10

// chunk is a run of whole lines and the number of its first line.
type chunk struct {
	data      []byte
	firstLine int
	buf       *[]byte
}

// lineVisitor receives every candidate of the lines a worker is given.
// It must not keep c's slices.
type lineVisitor func(line int, c *Candidate) error

// scanUniverse reads r as universe lines and calls visit for each candidate
// on one of workers goroutines, each with its own visitor from newVisitor.
// Memory stays constant: at most workers+2 chunks of chunkSize bytes are
// live. It returns the number of candidates and the error of the lowest
// line number that failed.
func scanUniverse(r io.Reader, workers int, newVisitor func(worker int) lineVisitor) (uint64, error) {
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	workers = min(workers, MaxAnalyzeWorkers)
	pool := sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}
	chunks := make(chan chunk, workers)
	var (
		total    atomic.Uint64
		stop     atomic.Bool
		mu       sync.Mutex
		firstErr *LineError
		ioErr    error
	)
	fail := func(e *LineError) {
		mu.Lock()
		if firstErr == nil || e.Line < firstErr.Line {
			firstErr = e
		}
		mu.Unlock()
		stop.Store(true)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		visit := newVisitor(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p CandidateParser
			for ch := range chunks {
				if !stop.Load() {
					n, err := parseChunk(&p, ch, visit)
					total.Add(n)
					if err != nil {
						fail(err)
					}
				}
				pool.Put(ch.buf)
			}
		}()
	}

	// The reader: fill a buffer, cut it after its last newline, carry the
	// rest over to the next buffer.
	line := 1
	var carry []byte
	for !stop.Load() {
		bp := pool.Get().(*[]byte)
		buf := *bp
		n := copy(buf, carry)
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			ioErr = fmt.Errorf("reading universe: %w", err)
			pool.Put(bp)
			break
		}
		data := buf[:n]
		cut := n
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
			if cut == 0 {
				pool.Put(bp)
				fail(&LineError{Line: line, Err: fmt.Errorf("%w: line longer than %d bytes", ErrBadCandidate, chunkSize)})
				break
			}
		}
		carry = append(carry[:0], data[cut:]...)
		if cut > 0 {
			lines := bytes.Count(data[:cut], []byte{'\n'})
			chunks <- chunk{data: data[:cut], firstLine: line, buf: bp}
			line += lines
		} else {
			pool.Put(bp)
		}
		if eof {
			break
		}
	}
	close(chunks)
	wg.Wait()
	if firstErr != nil {
		return total.Load(), firstErr
	}
	return total.Load(), ioErr
}

// parseChunk parses the lines of one chunk.
func parseChunk(p *CandidateParser, ch chunk, visit lineVisitor) (uint64, *LineError) {
	data := ch.data
	line := ch.firstLine
	var n uint64
	for len(data) > 0 {
		var l []byte
		// Most lines of a large universe are 40 hex digits: check for
		// that length before searching for the newline.
		if len(data) > 40 && data[40] == '\n' && bytes.IndexByte(data[:40], '\n') < 0 {
			l, data = data[:40], data[41:]
		} else if i := bytes.IndexByte(data, '\n'); i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		c, err := p.Parse(l)
		if err != nil {
			return n, &LineError{Line: line, Err: err}
		}
		if c != nil {
			n++
			if err := visit(line, c); err != nil {
				return n, &LineError{Line: line, Err: err}
			}
		}
		line++
	}
	return n, nil
}

// ReadUniverse calls fn for every candidate of r, one at a time and in
// order, and returns the number of candidates. It stops at the first error,
// from a line or from fn, and names its line in a *LineError.
func ReadUniverse(r io.Reader, fn func(line int, c *Candidate) error) (uint64, error) {
	return scanUniverse(r, 1, func(int) lineVisitor { return fn })
}
