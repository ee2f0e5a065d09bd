package privacybeam

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spvfilter/spvfilter/privacy/attack"
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
	*attack.Report
}

// CaptureReport is the pipeline's output, the JSON object of "privacy
// analyze --capture FILE --universe FILE --json" (without its --intersect
// and --link parts).
type CaptureReport struct {
	Universe *universe.Scan  `json:"universe"`
	Clients  []SessionReport `json:"clients"`
	Warnings []string        `json:"warnings"`
}

// NewCaptureReport puts the sessions and their reports (in the same order)
// together, with every report's warnings named by session once in
// Warnings.
func NewCaptureReport(sessions []*capture.Session, reports []*attack.Report) (*CaptureReport, error) {
	if len(sessions) == 0 || len(reports) != len(sessions) {
		return nil, fmt.Errorf("privacybeam: %d reports for %d sessions", len(reports), len(sessions))
	}
	out := &CaptureReport{Universe: reports[0].Universe, Clients: []SessionReport{}, Warnings: []string{}}
	seen := map[string]bool{}
	for i, s := range sessions {
		out.Clients = append(out.Clients, SessionReport{Session: s.ID, Client: s.Client, UserAgent: s.UserAgent, Captured: s.Filters, Report: reports[i]})
		for _, w := range reports[i].Warnings {
			if w = fmt.Sprintf("session %s: %s", s.ID, w); !seen[w] {
				seen[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	return out, nil
}

// WriteJSON writes the report as the command-line tool prints it.
func (c *CaptureReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}
