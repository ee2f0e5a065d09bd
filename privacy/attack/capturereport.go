package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// SessionReport is one session's analysis, as "privacy analyze --capture
// --json" prints it in "clients".
type SessionReport struct {
	Session   string            `json:"session"`
	Client    string            `json:"client"`
	UserAgent string            `json:"user_agent,omitempty"`
	Captured  []*capture.Filter `json:"captured"`
	*Report
}

// JoinedReport is the intersection attack over several sessions, named by
// their ids: the --intersect report, and each group of linked sessions'.
type JoinedReport struct {
	Sessions []string `json:"sessions"`
	*Report
}

// LinkReport is the --link part of the report: the linkage, with its
// pairs' sessions named by id, and the report of each group.
type LinkReport struct {
	*Linkage
	Pairs  []LinkPair     `json:"pairs"`
	Groups []JoinedReport `json:"groups"`
}

// LinkPair is a pair of sessions compared, named by id.
type LinkPair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Third string `json:"third,omitempty"`
	SessionLink
}

// CaptureReport is the analysis of a capture's sessions, the JSON object of
// "privacy analyze --capture FILE --universe FILE --json" and of the Beam
// pipeline, with its --intersect and --link parts when asked.
type CaptureReport struct {
	Universe     *universe.Scan  `json:"universe"`
	Clients      []SessionReport `json:"clients"`
	Intersection *JoinedReport   `json:"intersection,omitempty"`
	Links        *LinkReport     `json:"link_report,omitempty"`
	Warnings     []string        `json:"warnings"`
}

// ReportOptions are what a CaptureReport holds besides each session's
// report: the intersection of all sessions, the links between them and
// each linked group's intersection, and the link threshold (zero: the
// default of LinkOptions).
type ReportOptions struct {
	Intersect     bool
	Link          bool
	LinkThreshold float64
}

// NewCaptureReport finishes the report of the sessions from acc, an
// accumulator of their groups of filters in the same order, then, with
// opts.Intersect, of all their filters: each session's report, the
// intersection, the links and each linked group's intersection, with
// every warning named by where it comes from once in Warnings. The
// intersection is no session of its own: every report is weighed under
// the priors fitted over the sessions' groups alone, which acc keeps.
func NewCaptureReport(sessions []*capture.Session, acc *Accumulator, opts ReportOptions) (*CaptureReport, error) {
	want := len(sessions)
	if opts.Intersect {
		want++
	}
	if n := len(acc.set.filters); len(sessions) == 0 || n != want {
		return nil, fmt.Errorf("attack: %d groups of filters for %d sessions (intersected: %v)", n, len(sessions), opts.Intersect)
	}
	// The intersection is no session of its own: the priors every
	// match is weighed under are fitted over the sessions alone.
	acc.fitOnly(len(sessions))
	reports, captureWarnings, err := acc.finishReports()
	if err != nil {
		return nil, err
	}
	out := &CaptureReport{Universe: reports[0].Universe, Clients: []SessionReport{}, Warnings: []string{}}
	w := warnings{seen: map[string]bool{}, out: &out.Warnings, universe: universeWarning(out.Universe), capture: captureWarnings}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
		out.Clients = append(out.Clients, SessionReport{Session: s.ID, Client: s.Client, UserAgent: s.UserAgent, Captured: s.Filters, Report: reports[i]})
		w.add("session "+s.ID+": ", reports[i].Warnings)
	}
	if opts.Intersect {
		out.Intersection = &JoinedReport{Sessions: ids, Report: reports[len(sessions)]}
		w.add("intersection: ", out.Intersection.Warnings)
	}
	if opts.Link {
		if out.Links, err = linkReport(acc, ids, opts.LinkThreshold, &w); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// linkReport links the sessions named ids (the first groups of acc) and
// intersects each group of linked sessions.
func linkReport(acc *Accumulator, ids []string, threshold float64, w *warnings) (*LinkReport, error) {
	compared := make([]int, len(ids)) // not the --intersect group
	for i := range compared {
		compared[i] = i
	}
	l, err := acc.Link(compared, LinkOptions{Threshold: threshold})
	if err != nil {
		return nil, err
	}
	l.Warnings = sessionsByID(l.Warnings, ids)
	w.add("link: ", l.Warnings)
	lr := &LinkReport{Linkage: l, Pairs: []LinkPair{}, Groups: []JoinedReport{}}
	for _, p := range l.Pairs {
		lp := LinkPair{A: ids[p.A], B: ids[p.B], SessionLink: p}
		if p.Third >= 0 {
			lp.Third = ids[p.Third]
		}
		lr.Pairs = append(lr.Pairs, lp)
	}
	for _, g := range l.Groups {
		r, err := acc.Intersect(g)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(g))
		for i, m := range g {
			names[i] = ids[m]
		}
		lr.Groups = append(lr.Groups, JoinedReport{Sessions: names, Report: r})
		w.add("group "+strings.Join(names, "+")+": ", r.Warnings)
	}
	return lr, nil
}

// warnings gathers warnings, each once, prefixed by where they come from;
// the universe's, which every report of one reading carries, once as the
// universe's, and the capture's (see priorWarning and priorShift.warning),
// which every session's report (and the linkage the first) carry, once as
// the capture's.
type warnings struct {
	seen     map[string]bool
	out      *[]string
	universe string   // universeWarning of the reading, or ""
	capture  []string // the warnings of the sessions' fit of the size prior
}

func (w *warnings) add(prefix string, ws []string) {
	for _, s := range ws {
		p := prefix
		switch {
		case s != "" && s == w.universe:
			p = "universe: "
		case s != "" && slices.Contains(w.capture, s):
			p = "capture: "
		}
		if s = p + s; !w.seen[s] {
			w.seen[s] = true
			*w.out = append(*w.out, s)
		}
	}
}

// WriteJSON writes the report as the command-line tool prints it: <, >
// and & as written, not escaped for HTML.
func (c *CaptureReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// sessionNumbers finds sessions the linker names by their 1-based
// numbers: a session, or a group of them joined by +.
var sessionNumbers = regexp.MustCompile(`\b(session|group) (\d+(?:\+\d+)*)\b`)

// sessionsByID names in the linker's warnings the sessions it numbers
// from 1 ("session 93", "group 8+12") by their ids, as the rest of the
// report names them.
func sessionsByID(warnings, ids []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		out[i] = sessionNumbers.ReplaceAllStringFunc(w, func(m string) string {
			sm := sessionNumbers.FindStringSubmatch(m)
			var names []string
			for _, num := range strings.Split(sm[2], "+") {
				n, err := strconv.Atoi(num)
				if err != nil || n < 1 || n > len(ids) {
					return m
				}
				names = append(names, ids[n-1])
			}
			return sm[1] + " " + strings.Join(names, "+")
		})
	}
	return out
}
