package privacybeam

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// maxClassElems is the largest candidate class: candidates with more
// elements count as this many, as privacy counts them.
const maxClassElems = 255

// maxUniverseLine is the longest universe line privacy's reader accepts
// (its chunk size): a longer one fails the whole analysis.
const maxUniverseLine = 256 << 10

// FileCount is what one universe file holds, counted line by line as
// privacy reads it: the merge needs the candidates of every class, which a
// Report does not export, and the lines of each file to number the lines
// across files.
type FileCount struct {
	File int
	Path string
	// LinesRead, LinesSkipped and CandidatesTested are the file's
	// universe.Scan; BadLineNumbers and BadLines the lines (within
	// the file) and reasons of its first universe.MaxBadLines skipped lines.
	LinesRead, LinesSkipped, CandidatesTested uint64
	BadLineNumbers                            []int
	BadLines                                  []string
	// Classes counts the candidates of each class: 0 a public key under
	// the pair test, t >= 1 a candidate of t elements (at most 255).
	Classes []uint64
	// Pairs counts the key lines marked as an address's pair, ListedLines
	// the address lines they name as taken over.
	Pairs, ListedLines uint64
}

// candidateClass is the class privacy gives a candidate when it sums the
// false-positive rates: 0 for a pair under the pair test, else its number
// of elements, at most maxClassElems.
func candidateClass(c *universe.Candidate, pairTest bool) int {
	if pairTest && c.Pair() {
		return 0
	}
	return min(len(c.Elems), maxClassElems)
}

// CountUniverse reads a universe file with privacy's candidate parser and
// counts its lines and candidates; file and path name it in the result.
func CountUniverse(r io.Reader, file int, path string, pairTest bool) (*FileCount, error) {
	fc := &FileCount{File: file, Path: path, Classes: make([]uint64, maxClassElems+1)}
	br := bufio.NewReaderSize(r, 64<<10)
	var p universe.Parser
	var line []byte
	for n := 1; ; n++ {
		line = line[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			line = append(line, chunk...)
			if len(line) > maxUniverseLine {
				return nil, fmt.Errorf("%s: %w", path, &universe.LineError{Line: n,
					Err: fmt.Errorf("%w: line longer than %d bytes", universe.ErrBadCandidate, maxUniverseLine)})
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: reading universe: %w", path, err)
		}
		if len(line) == 0 {
			return fc, nil // the end
		}
		fc.LinesRead++
		text := bytes.TrimSuffix(line, []byte{'\n'})
		c, perr := p.Parse(text)
		switch {
		case perr != nil:
			fc.LinesSkipped++
			if len(fc.BadLines) < universe.MaxBadLines {
				fc.BadLineNumbers = append(fc.BadLineNumbers, n)
				// As privacy words it: without the sentinel every reason has.
				fc.BadLines = append(fc.BadLines, strings.TrimPrefix(perr.Error(), universe.ErrBadCandidate.Error()+": "))
			}
		case c != nil:
			fc.CandidatesTested++
			fc.Classes[candidateClass(c, pairTest)]++
			if c.PairAddress != nil {
				fc.Pairs++
				fc.ListedLines += uint64(len(c.Listed))
			}
		}
		if err != nil {
			return fc, nil // a last line without a newline
		}
	}
}

// universeTotals is the universe of all the files, as one pass over their
// concatenation sees it.
type universeTotals struct {
	offsets []int // the lines before each file
	scan    *universe.Scan
	classes []uint64 // less the address lines that marked keys take over
	size    uint64   // the report's UniverseSize
	pairs   uint64
	listed  uint64
}

// totalUniverse adds the files' counts up in the order of their index.
func totalUniverse(counts []*FileCount) (*universeTotals, error) {
	t := &universeTotals{offsets: make([]int, len(counts)), classes: make([]uint64, maxClassElems+1),
		scan: &universe.Scan{BadLines: []universe.BadLine{}}}
	byFile := make([]*FileCount, len(counts))
	for _, fc := range counts {
		if fc.File < 0 || fc.File >= len(counts) || byFile[fc.File] != nil {
			return nil, fmt.Errorf("privacybeam: universe file index %d out of place among %d files", fc.File, len(counts))
		}
		byFile[fc.File] = fc
	}
	lines := 0
	for i, fc := range byFile {
		t.offsets[i] = lines
		lines += int(fc.LinesRead)
		t.scan.LinesRead += fc.LinesRead
		t.scan.LinesSkipped += fc.LinesSkipped
		t.scan.CandidatesTested += fc.CandidatesTested
		for j, reason := range fc.BadLines {
			if len(t.scan.BadLines) < universe.MaxBadLines {
				t.scan.BadLines = append(t.scan.BadLines, universe.BadLine{Line: t.offsets[i] + fc.BadLineNumbers[j], Reason: reason})
			}
		}
		for c, n := range fc.Classes {
			t.classes[c] += n
		}
		t.pairs += fc.Pairs
		t.listed += fc.ListedLines
	}
	// As privacy counts them: never below zero, even for "listed"
	// fields that name lines the universe lacks.
	t.classes[1] -= min(t.classes[1], t.listed)
	t.size = t.scan.CandidatesTested - min(t.scan.CandidatesTested, t.listed)
	switch {
	case t.scan.CandidatesTested == 0 && t.scan.LinesSkipped > 0:
		b := t.scan.BadLines[0]
		return nil, fmt.Errorf("%w: all %d lines that are not blank or comments were skipped (line %d: %s)",
			universe.ErrEmpty, t.scan.LinesSkipped, b.Line, b.Reason)
	case t.scan.CandidatesTested == 0:
		return nil, fmt.Errorf("%w (%d lines read)", universe.ErrEmpty, t.scan.LinesRead)
	}
	return t, nil
}
