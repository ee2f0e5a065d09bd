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
// The notes on how a step's block fetches were spread over the peers
// (spreadNote) are one kind whose counts add up: the rescan keeps the
// blocks each peer was asked for over its steps, and one note on them
// all, made anew from the sums after each step that noted its fetches
// (one peer asked for all, or for more than an even share). A step whose
// blocks were spread evenly over several peers writes no note, and its
// blocks are not in the sums.
type rescanWarnings struct {
	texts   []string
	counts  []int
	kinds   map[string]int // a kind's index in texts
	dropped int            // warnings of kinds past maxWarningKinds
	// fetched are the blocks each peer was asked for in the notes on
	// the spread, at most maxSpreadPeers peers; fetchedOthers those of
	// peers past them.
	fetched       map[string]int
	fetchedOthers int
}

// maxSpreadPeers bounds the peers the note on the spread names.
const maxSpreadPeers = 64

// spreadKind is the kind of the notes on the spread, which no other
// warning's kind is (those have no NUL).
const spreadKind = "\x00fetch spread"

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
	if fs, ok := parseSpreadNote(w); ok {
		w, k = ws.addFetched(fs), spreadKind
		if i, ok := ws.kinds[k]; ok {
			ws.texts[i] = w // a total, not a repetition
			return false
		}
	}
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
	out := make([]string, 0, len(ws.texts)+1)
	for i, w := range ws.texts {
		if n := ws.counts[i]; n > 1 {
			w = fmt.Sprintf("%s (warned %d times, the latest shown)", w, n)
		}
		out = append(out, w)
	}
	if ws.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more warnings of other kinds than these %d were left out", ws.dropped, maxWarningKinds))
	}
	return out
}

// addFetched adds a note's counts to the rescan's and returns the note on
// them all.
func (ws *rescanWarnings) addFetched(fs []peerFetches) string {
	if ws.fetched == nil {
		ws.fetched = map[string]int{}
	}
	for _, f := range fs {
		if _, ok := ws.fetched[f.addr]; ok || len(ws.fetched) < maxSpreadPeers {
			ws.fetched[f.addr] += f.blocks
		} else {
			ws.fetchedOthers += f.blocks
		}
	}
	all := make([]peerFetches, 0, len(ws.fetched))
	for addr, n := range ws.fetched {
		all = append(all, peerFetches{addr: addr, blocks: n})
	}
	return spreadNote(all, ws.fetchedOthers)
}
