package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

// printJSON writes v as one indented JSON object followed by a newline.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// plainJSON encodes v as one line of JSON that keeps <, > and & as
// written: the encoder's escapes of them are for HTML pages.
func plainJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and numbers only: it cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// warn writes each warning on a line of its own on standard error.
func (a *app) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "spvfilter: warning: %s\n", oneLine(w))
	}
}

// warnBesideResult writes warnings as warn does, but not with --json:
// the result's JSON carries them in its "warnings", and standard error
// then holds no text, so that the output read with 2>&1 is JSON alone.
func (a *app) warnBesideResult(warnings []string) {
	if !a.json {
		a.warn(warnings)
	}
}

// warnAlone writes warnings that no result carries (one before a result
// that comes later, or of a command that failed): as warn does, or with
// --json as one JSON line {"warning": ...} each.
func (a *app) warnAlone(warnings []string) {
	if !a.json {
		a.warn(warnings)
		return
	}
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "%s\n", plainJSON(struct {
			Warning string `json:"warning"`
		}{w}))
	}
}

// orEmpty returns warnings, or an empty list for none, so that JSON shows
// "warnings": [] rather than null.
func orEmpty(warnings []string) []string {
	if warnings == nil {
		return []string{}
	}
	return warnings
}

// lineWriter writes each line written to it to w as format turns it,
// so that what a library logs on standard error reads as the tool's: a
// line of its own ("spvfilter: ..."), or with --json a JSON object. A
// line is written once whole.
type lineWriter struct {
	w      io.Writer
	format func(line string) string
	mu     sync.Mutex
	part   []byte // the start of a line not yet ended
}

// logWriter is where a library's log lines go on standard error.
func (a *app) logWriter() io.Writer {
	if a.json {
		return &lineWriter{w: a.stderr, format: func(line string) string {
			b := plainJSON(struct {
				Log string `json:"log"`
			}{logWords(line)})
			return string(b)
		}}
	}
	return &lineWriter{w: a.stderr, format: func(line string) string { return "spvfilter: " + logWords(line) }}
}

// logSocket matches the socket operation Go's net errors begin with
// ("read tcp 127.0.0.1:5->127.0.0.1:6: read: ").
var logSocket = regexp.MustCompile(`(read|write) tcp \S+->\S+: (read: |write: )?`)

// logWords says a library's log line in the tool's words: a connection
// that ended, was reset or closed, rather than Go's EOF and socket
// errors.
func logWords(line string) string {
	line = logSocket.ReplaceAllString(line, "")
	if i := strings.Index(line, ": closed: relay: writing capture: "); i >= 0 {
		// Why is said once, in the error that ends the capture.
		return line[:i] + ": closed: its record could not be written to --out"
	}
	for _, r := range []replacement{
		{": closed: EOF", ": closed: the client or the node hung up"},
		{": closed: connection reset by peer", ": closed: the connection was reset"},
		{": closed: broken pipe", ": closed: the other side had hung up"},
		{": closed: use of closed network connection", ": closed"},
	} {
		if strings.HasSuffix(line, r.old) {
			return strings.TrimSuffix(line, r.old) + r.new
		}
	}
	return line
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, b...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintln(l.w, l.format(string(l.part[:i]))); err != nil {
			return len(b), err
		}
		l.part = l.part[i+1:]
	}
}

// progressReader reads r and tells set how many of its total bytes have
// been read.
type progressReader struct {
	r     io.Reader
	done  int
	total int
	set   func(done, total int)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += n
	p.set(p.done, p.total)
	return n, err
}

// withProgress returns file, read with a progress bar described by what
// when its size is known, and the function that removes the bar.
func (a *app) withProgress(what string, file *os.File) (io.Reader, func()) {
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return file, func() {}
	}
	set, finish := a.bar(what, int(st.Size()))
	if set == nil {
		return file, finish
	}
	return &progressReader{r: file, total: int(st.Size()), set: set}, finish
}
