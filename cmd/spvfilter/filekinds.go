package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// fileKind is what a file the privacy commands read or write holds, told
// from its first bytes: the commands name it when a file of one kind is
// given where another is wanted.
type fileKind int

const (
	kindUnknown  fileKind = iota
	kindCapture           // the JSON lines of privacy capture
	kindLabels            // the labels.json of privacy simulate
	kindReport            // the JSON of privacy analyze or fetches
	kindIndex             // the appearance index of privacy universe --index
	kindUniverse          // the candidates of privacy universe or simulate
	kindBlocks            // the block file of lab --save-blocks
)

// kindWords says what a file of each kind is and which flag takes it.
var kindWords = map[fileKind]struct{ what, give string }{
	kindCapture:  {"a capture of privacy capture (JSON lines)", "give it to privacy analyze --capture or privacy fetches --capture"},
	kindLabels:   {"the labels of privacy simulate", "give it to privacy evaluate --labels"},
	kindReport:   {"a report of privacy analyze or fetches", "give it to privacy evaluate --report"},
	kindIndex:    {"an appearance index of privacy universe --index", "give it to privacy fetches --index"},
	kindUniverse: {"a universe of candidates (privacy universe, privacy simulate)", "give it to privacy analyze --universe"},
	kindBlocks:   {"a block file of lab --save-blocks", "give it to lab --blocks"},
}

// fileFlagTakes says, for each flag that reads a whole file, what file it
// takes and which command writes one: a file not found names it.
var fileFlagTakes = map[string]string{
	"--capture":  "the JSON lines privacy capture writes (its --out FILE; privacy simulate writes capture.jsonl and fetch-capture.jsonl)",
	"--universe": "the candidates privacy universe writes (its --out FILE; privacy simulate writes universe.txt)",
	"--index":    "the appearance index privacy universe --index writes (privacy simulate writes chain.idx)",
	"--labels":   "the labels.json privacy simulate writes into its --out directory",
	"--report":   "the JSON privacy analyze --capture --json or privacy fetches --json prints (saved with > FILE)",
	"--blocks":   "a block file that lab --save-blocks wrote",
	"--vectors":  "BIP 158's test vectors, testnet-19.json in the BIP's folder",
}

// missingFileAdvice says what to give in place of the file shown, given
// with the flag or argument what, that does not exist: what the flag takes
// and which command writes it, or, for @FILE, the value itself.
func missingFileAdvice(what, shown string) string {
	if strings.HasPrefix(shown, "@") {
		return ": @ reads the file named after it: check the path, or give the value itself without @"
	}
	if takes, ok := fileFlagTakes[what]; ok {
		return fmt.Sprintf(": %s takes %s", what, takes)
	}
	return ""
}

// indexOpening opens an appearance index, the version after it (see
// universe.IndexVersion).
var indexOpening = []byte("SPVFIDX")

// maxKindBytes bounds what is read of a file to tell its kind.
const maxKindBytes = 1 << 20

// kindOf tells the kind of the document b begins: a JSON object whose
// format is the labels' or that lists clients (a report), a first line
// that is a capture record, an appearance index, or a universe (the
// comment privacy universe or simulate opens it with, or a candidate
// line with the comment they write beside it), or a block file.
func kindOf(b []byte) fileKind {
	if bytes.HasPrefix(b, indexOpening) {
		return kindIndex
	}
	if bytes.HasPrefix(b, []byte(blockFileOpening)) {
		return kindBlocks
	}
	if universeOpening.Match(b[:min(len(b), 4096)]) {
		return kindUniverse
	}
	var top struct {
		Format  string          `json:"format"`
		Wallets json.RawMessage `json:"wallets"`
		Clients json.RawMessage `json:"clients"`
	}
	first, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if _, err := capture.Read(bytes.NewReader(first)); err == nil && len(bytes.TrimSpace(first)) > 0 {
		return kindCapture
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if dec.Decode(&top) != nil {
		// A document cut short by maxKindBytes: its opening keys tell.
		head := b[:min(len(b), 4096)]
		switch {
		case labelsOpening.Match(head):
			return kindLabels
		case reportOpening.Match(head):
			return kindReport
		}
		return kindUnknown
	}
	switch {
	case top.Format == simulate.LabelsFormat || top.Wallets != nil:
		return kindLabels
	case top.Clients != nil:
		return kindReport
	}
	return kindUnknown
}

// labelsOpening and reportOpening find the keys that open the labels and
// a report; universeOpening the opening comment of a universe, or its
// first line with a candidate's comment.
var (
	universeOpening = regexp.MustCompile(`^\x{feff}?(# (candidates of |simulated universe: )|(\s*(#[^\n]*)?\n)*[^\s#]+ # (height|pair) )`)
	labelsOpening   = regexp.MustCompile(`^\s*\{\s*"format"\s*:\s*"` + regexp.QuoteMeta(simulate.LabelsFormat) + `"`)
	reportOpening   = regexp.MustCompile(`"clients"\s*:\s*\[`)
)

// fileKindOf tells the kind of the file at path, kindUnknown when it
// cannot be read.
func fileKindOf(path string) fileKind {
	f, err := os.Open(path)
	if err != nil {
		return kindUnknown
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(bufio.NewReader(f), maxKindBytes))
	return kindOf(b)
}

// headReader reads r keeping its first maxKindBytes, so that the kind of
// a file read once (a named pipe, standard input) can be told after a
// reader refused it.
type headReader struct {
	r    io.Reader
	head []byte
}

// newHeadReader is a headReader of r.
func newHeadReader(r io.Reader) *headReader { return &headReader{r: r} }

// Read reads from the underlying reader, keeping the head.
func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if keep := min(n, maxKindBytes-len(h.head)); keep > 0 {
		h.head = append(h.head, p[:keep]...)
	}
	return n, err
}

// kind tells the kind of what was read, after reading on up to
// maxKindBytes when less was read: a reader that refused the first line
// has read only part of the file.
func (h *headReader) kind() fileKind {
	if len(h.head) < maxKindBytes {
		io.Copy(io.Discard, io.LimitReader(h, int64(maxKindBytes-len(h.head))))
	}
	return kindOf(h.head)
}

// otherKind is the error of a file given with flag that holds a document
// of kind k, where a file of another kind was wanted.
func otherKind(flag, path string, k fileKind, cause error) error {
	w := kindWords[k]
	return usageError{&restated{fmt.Sprintf("%s %s: %s, not what %s takes: %s", flag, path, w.what, flag, w.give), cause}}
}

// readCapture reads the capture records of the --capture file path; a file
// of another kind (the labels, a report) is named as what it is.
func readCapture(path string) ([]capture.Record, error) {
	file, err := openInputFile("--capture", path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// The file is opened once: a named pipe has nothing to give a second
	// opening, which would wait for a writer that never comes.
	head := newHeadReader(file)
	records, err := capture.Read(head)
	if err != nil {
		if k := head.kind(); k != kindUnknown && k != kindCapture {
			return nil, otherKind("--capture", path, k, err)
		}
		var le *capture.LineError
		if errors.As(err, &le) && le.Line == 1 && binaryHead(head.head[:min(len(head.head), 4096)]) {
			// Not a capture cut or damaged further on: no line of one.
			return nil, usageError{&restated{fmt.Sprintf("--capture %s: binary data, not a capture: want the JSON lines privacy capture writes, one record per line", path), err}}
		}
		return nil, captureLineError(path, err)
	}
	return records, nil
}

// captureLineError is bad input naming the --capture file path, and the
// line and field of it that capture.Read refused.
func captureLineError(path string, err error) error {
	var le *capture.LineError
	if !errors.As(err, &le) {
		return badInputWords("--capture "+path, err)
	}
	where := fmt.Sprintf("--capture %s, line %d", path, le.Line)
	if le.Field != "" {
		where += fmt.Sprintf(", field %q", le.Field)
	}
	want := ""
	switch {
	case le.Field == "" && errors.Is(le.Err, io.ErrUnexpectedEOF):
		// A line that ends inside its record: the file was cut, or
		// copied while privacy capture was still writing it.
		return usageError{&restated{where + ": the record is cut short (the line ends inside it: a file cut, or copied while privacy capture was writing it); want the JSON lines privacy capture writes, one whole record per line", err}}
	case le.Line == 1 && le.Field == "":
		// No line of a capture at all: a file of another kind, which
		// kindOf did not know.
		want = "; want the JSON lines privacy capture writes, one record per line"
	}
	msg := words(le.Err)
	if msg == fmt.Sprintf("unknown field %q", le.Field) {
		// The field is named in where.
		msg = "no capture record has this field"
		if le.Line == 1 {
			want = "; want the JSON lines privacy capture writes, one record per line"
		}
	}
	if le.Field != "" {
		// The field is named once, in where.
		msg = strings.Replace(msg, fmt.Sprintf("field %q holds", le.Field), "it holds", 1)
	}
	return usageError{&restated{where + ": " + msg + want, err}}
}

// checkCaptureOut refuses an --out file that capture would append its
// records to but that holds something else (the labels, a report, any
// text that is no capture record): the file would be of no kind after.
func checkCaptureOut(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		// A new file, one checkOutputFile has refused, or a named pipe
		// or a device: nothing to read back (opening a pipe to read
		// would wait for a writer).
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxKindBytes))
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	switch k := kindOf(b); k {
	case kindCapture:
		return nil
	case kindUnknown:
	default:
		return badInput("--out %s: holds %s, not capture records: capture appends to a file of its own records only (give a new file)", path, kindWords[k].what)
	}
	return badInput("--out %s: holds something other than capture records: capture appends to a file of its own records only (give a new file)", path)
}
