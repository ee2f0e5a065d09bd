package attack

import (
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// The block-download attack lives in privacy/leak; these names keep its
// callers here compiling.
type (
	// FetchView is leak.View.
	FetchView = leak.View
	// FetchReport is leak.Report.
	FetchReport = leak.Report
	// FetchOptions is leak.Options.
	FetchOptions = leak.Options
	// FetchMatch is leak.Match.
	FetchMatch = leak.Match
	// FetchGroup is leak.Group.
	FetchGroup = leak.Group
	// FetchClass is leak.Class.
	FetchClass = leak.Class
	// HeightRange is leak.HeightRange.
	HeightRange = leak.HeightRange
)

// Names of privacy/leak kept here.
const (
	DefaultMaxFetchMatches = leak.DefaultMaxMatches
	DefaultShifts          = leak.DefaultShifts
)

// ErrNoFetches is leak.ErrNoFetches.
var ErrNoFetches = leak.ErrNoFetches

// AnalyzeFetchViews is leak.Analyze.
func AnalyzeFetchViews(views []FetchView, ir *universe.IndexReader, opt FetchOptions) ([]*FetchReport, error) {
	return leak.Analyze(views, ir, opt)
}

// AnalyzeFetches runs the block-download attack on every session of a
// capture in one pass over the index: the candidates whose every
// appearance in the session's scanned range lies in a block the session
// fetched, grouped when downloads cannot tell them apart, and ranked by
// the probability that chance explains them (see the package
// documentation). The scanned range is the session's getcfilters ranges;
// its getcfheaders ranges, which a client syncs from the genesis block
// whatever it scans, do not count.
func AnalyzeFetches(sessions []*capture.FetchSession, ir *universe.IndexReader, opt FetchOptions) ([]*FetchReport, error) {
	views := make([]FetchView, len(sessions))
	for i, s := range sessions {
		views[i] = viewOf(s, ir)
	}
	return leak.Analyze(views, ir, opt)
}

// viewOf turns a captured session into heights of the index's chain.
func viewOf(s *capture.FetchSession, ir *universe.IndexReader) FetchView {
	hd := ir.Header()
	v := FetchView{ID: s.ID, Client: s.Client, UserAgent: s.UserAgent}
	for _, h := range s.Blocks {
		if height, ok := ir.Height(h); ok {
			v.Fetched = append(v.Fetched, height)
		} else {
			v.Unknown++
		}
	}
	headers := false
	for _, fr := range s.Ranges {
		if fr.Command != capture.CmdGetCFilters {
			headers = true
			continue
		}
		stop, ok := ir.Height(fr.StopHash)
		if !ok {
			v.RangesOutside++
			continue
		}
		if int64(fr.StartHeight) < int64(hd.First) {
			v.RangesOutside++
		}
		v.Scanned = append(v.Scanned, HeightRange{From: max(int32(min(fr.StartHeight, 1<<31-1)), hd.First), To: stop})
	}
	v.HeadersOnly = headers && len(v.Scanned) == 0 && v.RangesOutside == 0
	return v
}
