package universe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
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

// A Visitor receives the candidates of the lines that one of ReadParallel's
// goroutines parses, in increasing line order.
type Visitor interface {
	// Visit is called for every candidate; c and its slices are valid
	// only during the call. An error ends the reading.
	Visit(line int, c *Candidate) error
	// Flush is called after the goroutine's last line, for a visitor that
	// holds candidates back to work on them in batches.
	Flush()
}

// visitFunc is a Visitor that holds nothing back.
type visitFunc func(line int, c *Candidate) error

func (f visitFunc) Visit(line int, c *Candidate) error { return f(line, c) }
func (visitFunc) Flush()                               {}

// MaxWorkers bounds ReadOptions.Workers.
const MaxWorkers = 64

// ReadOptions tune ReadParallel.
type ReadOptions struct {
	// Workers is the number of parsing goroutines; 0 picks GOMAXPROCS (at
	// most 4), and more than MaxWorkers count as that many.
	Workers int
	// Strict ends the reading at the first line that is not a candidate,
	// instead of skipping and counting it.
	Strict bool
}

// ErrEmpty reports a universe without a single candidate.
var ErrEmpty = errors.New("privacy: the universe holds no candidate")

// MaxBadLines is how many skipped lines a Scan names.
const MaxBadLines = 10

// BadLine is a universe line that is not a candidate, and why.
type BadLine struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Scan counts what reading a universe met: every line, the lines
// skipped for not being candidates (the first MaxBadLines of them named
// with their reason), and the candidates tested. Blank and comment lines
// are neither skipped nor tested.
type Scan struct {
	LinesRead        uint64    `json:"lines_read"`
	LinesSkipped     uint64    `json:"lines_skipped"`
	CandidatesTested uint64    `json:"candidates_tested"`
	BadLines         []BadLine `json:"bad_lines"`
}

// addBad counts a skipped line, keeping the MaxBadLines lowest.
func (s *Scan) addBad(line int, err error) {
	s.LinesSkipped++
	if len(s.BadLines) == MaxBadLines && line > s.BadLines[MaxBadLines-1].Line {
		return
	}
	// The reason without the sentinel's prefix, which every one has.
	reason := strings.TrimPrefix(err.Error(), ErrBadCandidate.Error()+": ")
	s.BadLines = append(s.BadLines, BadLine{Line: line, Reason: reason})
	slices.SortFunc(s.BadLines, func(a, b BadLine) int { return a.Line - b.Line })
	if len(s.BadLines) > MaxBadLines {
		s.BadLines = s.BadLines[:MaxBadLines]
	}
}

// Append adds o, a scan of the lines that follow those s counts: o's line
// numbers are shifted by s.LinesRead, as if both were one universe.
func (s *Scan) Append(o *Scan) {
	s.add(o, int(s.LinesRead))
	s.LinesRead += o.LinesRead
}

// add adds o's candidates and skipped lines, shifted by offset lines.
func (s *Scan) add(o *Scan, offset int) {
	s.CandidatesTested += o.CandidatesTested
	skipped := s.LinesSkipped + o.LinesSkipped
	for _, b := range o.BadLines {
		s.addBad(offset+b.Line, errors.New(b.Reason))
	}
	s.LinesSkipped = skipped
}

// ReadParallel reads r as universe lines and gives each candidate to the
// Visitor of one of opts.Workers goroutines, each made by newVisitor
// (called for every worker, in the calling goroutine, before the reading
// starts). A leading UTF-8 byte order mark is skipped. Memory stays constant: at most workers+2 chunks of chunkSize
// bytes are live. A line that is not a candidate is skipped and counted,
// or with opts.Strict ends the reading; an error of a visitor always ends
// it, as does a line longer than a chunk. The error returned is that of
// the lowest line number that failed. The Scan counts what was read; a
// universe without candidates is not an error here (see
// Scan.RequireCandidates).
func ReadParallel(r io.Reader, opts ReadOptions, newVisitor func(worker int) Visitor) (*Scan, error) {
	r = skipBOM(r)
	workers, strict := opts.Workers, opts.Strict
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	workers = min(workers, MaxWorkers)
	pool := sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}
	chunks := make(chan chunk, workers)
	var (
		stop     atomic.Bool
		mu       sync.Mutex
		firstErr *LineError
		ioErr    error
	)
	var failLine atomic.Int64 // the lowest line that failed so far
	failLine.Store(math.MaxInt64)
	fail := func(e *LineError) {
		mu.Lock()
		if firstErr == nil || e.Line < firstErr.Line {
			firstErr = e
			failLine.Store(int64(e.Line))
		}
		mu.Unlock()
		stop.Store(true)
	}
	scans := make([]Scan, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		v := newVisitor(w)
		scan := &scans[w]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer v.Flush()
			var p Parser
			for ch := range chunks {
				// After a failure, chunks before its line are still
				// parsed: one of them may fail at a lower line.
				if !stop.Load() || int64(ch.firstLine) < failLine.Load() {
					if err := parseChunk(&p, ch, v, strict, scan); err != nil {
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
	lastOpen := false // the input ends without a newline
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
		} else {
			lastOpen = n > 0 && data[n-1] != '\n'
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
	total := &Scan{LinesRead: uint64(line - 1), BadLines: []BadLine{}}
	if lastOpen {
		total.LinesRead++
	}
	for i := range scans {
		total.add(&scans[i], 0)
	}
	if firstErr != nil {
		return total, firstErr
	}
	return total, ioErr
}

// RequireCandidates returns an error wrapping ErrEmpty, naming the first
// skipped line if there is one, when the scan met no candidate.
func (s *Scan) RequireCandidates() error {
	switch {
	case s.CandidatesTested == 0 && s.LinesSkipped > 0:
		b := s.BadLines[0]
		return fmt.Errorf("%w: all %d lines that are not blank or comments were skipped (line %d: %s)",
			ErrEmpty, s.LinesSkipped, b.Line, b.Reason)
	case s.CandidatesTested == 0 && s.LinesRead == 1:
		return fmt.Errorf("%w (1 line read)", ErrEmpty)
	case s.CandidatesTested == 0:
		return fmt.Errorf("%w (%d lines read)", ErrEmpty, s.LinesRead)
	}
	return nil
}

// parseChunk parses the lines of one chunk, counting into scan.
func parseChunk(p *Parser, ch chunk, v Visitor, strict bool, scan *Scan) *LineError {
	data := ch.data
	line := ch.firstLine
	// Counted locally: the workers' scans share cache lines.
	var tested uint64
	defer func() { scan.CandidatesTested += tested }()
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
			if strict {
				return &LineError{Line: line, Err: err}
			}
			scan.addBad(line, err)
		} else if c != nil {
			tested++
			if err := v.Visit(line, c); err != nil {
				return &LineError{Line: line, Err: err}
			}
		}
		line++
	}
	return nil
}

// Read calls fn for every candidate of r, one at a time and in order, and
// returns the number of candidates. It stops at the first error, from a
// line or from fn, and names its line in a *LineError; an empty universe
// gives 0 and no error.
func Read(r io.Reader, fn func(line int, c *Candidate) error) (uint64, error) {
	scan, err := ReadParallel(r, ReadOptions{Workers: 1, Strict: true}, func(int) Visitor { return visitFunc(fn) })
	return scan.CandidatesTested, err
}
