package client

import (
	"fmt"
	"regexp"
)

// rescanWarnings are a rescan's warnings, one of each kind: a warning's
// kind is its text but for the numbers and hashes in it (heights, counts,
// times), which change over a following rescan's life, so that the same
// warning, repeated block after block for months, is kept once, its
// latest text with how many times it came. Peers' addresses are kept in
// the kind: a warning about another peer is another warning. At most
// maxWarningKinds kinds are kept; those past it are counted only.
//
// The notes on how a step's block fetches were spread over the peers are
// not kept: the blocks each peer was asked for over the steps, and its
// share of them, are added up (fetches), and one note on the sums, in the
// words of a scan's (fetchTally.note), ends the list when one is due.
type rescanWarnings struct {
	texts   []string
	counts  []int
	kinds   map[string]int // a kind's index in texts
	dropped int            // warnings of kinds past maxWarningKinds
	fetches fetchTally
}

// maxWarningKinds bounds the kinds of warnings a rescan keeps.
const maxWarningKinds = 64

// warningNumbers matches what a warning's kind leaves out: hashes and
// numbers, but not the addresses of peers (IPv4 and port, kept whole).
var (
	warningNumbers = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+|\b[0-9a-f]{16,}\b|\d+`)
	warningAddr    = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+:\d+$`)
)

// warningKind returns the kind of warning w.
func warningKind(w string) string {
	return warningNumbers.ReplaceAllStringFunc(w, func(s string) string {
		if warningAddr.MatchString(s) {
			return s
		}
		return "#"
	})
}

// add keeps w, and reports whether its kind is new.
func (ws *rescanWarnings) add(w string) bool {
	k := warningKind(w)
	if i, ok := ws.kinds[k]; ok {
		ws.texts[i] = w
		ws.counts[i]++
		return false
	}
	if len(ws.texts) >= maxWarningKinds {
		ws.dropped++
		return false
	}
	if ws.kinds == nil {
		ws.kinds = map[string]int{}
	}
	ws.kinds[k] = len(ws.texts)
	ws.texts = append(ws.texts, w)
	ws.counts = append(ws.counts, 1)
	return true
}

// list returns the warnings kept, in the order their kinds first came,
// each the latest text of its kind, with the times it came if more than
// once.
func (ws *rescanWarnings) list() []string {
	out := make([]string, 0, len(ws.texts)+2)
	for i, w := range ws.texts {
		if n := ws.counts[i]; n > 1 {
			w = fmt.Sprintf("%s (warned %d times, the latest shown)", w, n)
		}
		out = append(out, w)
	}
	if ws.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more warnings of other kinds than these %d were left out", ws.dropped, maxWarningKinds))
	}
	if w := ws.fetches.note(); w != "" {
		out = append(out, w)
	}
	return out
}
