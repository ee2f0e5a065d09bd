package attack

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// ErrMismatch reports accumulators, or an accumulator and a saved state,
// of different groups of filters or options, which cannot be combined.
var ErrMismatch = errors.New("privacy: accumulators of different filters or options")

// ErrBadState reports a saved accumulator state that is malformed or whose
// counts do not add up.
var ErrBadState = errors.New("privacy: bad accumulator state")

// maxClassElems caps the element count used to classify a candidate for
// the false-positive expectation; scripts with more data pushes than this
// are counted as if they had this many (their rate is slightly
// underestimated).
const maxClassElems = 255

// Accumulator gathers what testing the candidates of a universe against
// groups of filters reveals (one group per session; see the package
// documentation), and finishes it into reports. Readings add up as the
// reading of their concatenation: a universe split over files, read by
// several accumulators on several machines and merged in the order of the
// files, gives the reports of one pass over the whole.
//
// Reports, Intersect and Link, which only read what was read, may be
// called from several goroutines at once; ReadUniverse, Merge and
// UnmarshalJSON may not be called alongside anything else.
// ReadUniverse itself reads with several goroutines.
type Accumulator struct {
	set  *groupSet
	scan universe.Scan // every line read so far
	t    *tally
	// fit is the priors fitted over every group's counts, kept until
	// more is read (see priors), held by fitMu: the calls that only
	// read fit them.
	fitMu sync.Mutex
	fit   *fittedPriors
	// sessions is how many of the first groups are sessions, those the
	// priors are fitted over (0: every group; see fitOnly).
	sessions int
}

// fittedPriors is what the matches' probabilities are weighed under,
// fitted over every group of an accumulator: the prior on wallet sizes
// (see fitSizes), which linking every group weighs under too, and the
// wallets' shares of the classes (see fitClassMix). Either is nil until
// fitted.
type fittedPriors struct {
	sizes *sizePrior
	mix   *classMix
}

// priors returns the priors fitted over every group's report, reports
// (those of a.report, before finish; nil: made here), or those fitted
// before if nothing was read since: Reports, Intersect and Link fit each
// once.
func (a *Accumulator) priors(u *universeCounts, reports []*Report) *fittedPriors {
	a.fitMu.Lock()
	defer a.fitMu.Unlock()
	if a.fit == nil {
		a.fit = &fittedPriors{}
	}
	if a.fit.sizes != nil && a.fit.mix != nil {
		return a.fit
	}
	n := a.sessionGroups()
	if reports == nil {
		reports = make([]*Report, n)
		for g := range reports {
			reports[g] = a.report(g, u)
		}
	}
	reports = reports[:n]
	if a.fit.sizes == nil {
		a.fit.sizes = fitReportSizes(reports, u.size, a.set)
	}
	if a.fit.mix == nil {
		a.fit.mix = fitClassMix(reports, u.classes, u.size)
	}
	return a.fit
}

// linkPrior returns the prior on wallet sizes fitted over sessions, the
// linked groups': that of every group, fitted once (see priors), when
// they are every group in order, else fitted over them alone. It counts
// the sessions of the same matches as copies (see weighTwins), as the
// reports' fit does.
func (a *Accumulator) linkPrior(sessions []linkSession, size uint64) *sizePrior {
	weighTwins(sessions)
	all := len(sessions) == a.sessionGroups()
	for i := range sessions {
		all = all && sessions[i].group == i
	}
	if !all {
		return fitSizes(sessions, size)
	}
	a.fitMu.Lock()
	defer a.fitMu.Unlock()
	if a.fit == nil {
		a.fit = &fittedPriors{}
	}
	if a.fit.sizes == nil {
		a.fit.sizes = fitSizes(sessions, size)
	}
	return a.fit.sizes
}

// sessionGroups is how many of the first groups are sessions, those the
// priors are fitted over: every group unless fitOnly said otherwise.
func (a *Accumulator) sessionGroups() int {
	if a.sessions > 0 && a.sessions < len(a.set.filters) {
		return a.sessions
	}
	return len(a.set.filters)
}

// fitOnly has the priors fitted over the first n groups alone, the
// sessions, where the groups after them are not sessions of their own:
// a capture report's intersection of every session's filters (see
// NewCaptureReport) is the sessions' wallet again, and counted as one
// more session it would weigh that wallet's size twice in the prior of
// sizes and in the class shares every match is weighed under, and make
// a session its copy. The copies the prior weighs as one (see
// linkSession.evidence) are counted among the sessions alone. It drops
// the priors fitted over other groups; it may not be called alongside
// anything else.
func (a *Accumulator) fitOnly(n int) {
	if n <= 0 || n > len(a.set.filters) {
		n = len(a.set.filters)
	}
	if n == a.sessionGroups() {
		return
	}
	a.sessions = n
	copies := countCopies(a.set.filters[:n])
	for range a.set.filters[n:] {
		copies = append(copies, 1)
	}
	a.set.copies = copies
	a.dropPriors()
}

// groupSet is what an accumulator tests and how: its groups of filters,
// and what is derived from them once.
type groupSet struct {
	filters [][]*bip37.Filter
	opts    AnalyzeOptions // MaxMatches set
	// full is, per group, the mask of all its filters; limit the matches
	// it lists at most (0 for a group that matches everything).
	full  []uint64
	limit []int
	// copies is, per group, how many groups hold the very same filters
	// (itself among them): the size prior weighs them as one (see
	// linkSession.evidence).
	copies []int
	// id identifies the filters and the options that change the counts,
	// so that only accumulators of the same ones are combined; it is
	// computed when first needed (a single pass never needs it).
	id    [sha256.Size]byte
	hasID bool
}

// tally is the counts of testing candidates: those of every group of
// filters, and what the groups share. It is padded so that the tallies of
// two reading goroutines never share a cache line.
type tally struct {
	_ [64]byte
	// classes counts the candidates by class (see classRate).
	classes [maxClassElems + 1]uint64
	// pairs counts the key lines marked as an address's pair, undoLines
	// the address lines they take over; each of those was also counted
	// as one of classes[1].
	pairs, undoLines uint64
	groups           []groupTally
	_                [64]byte
}

// groupTally is the counts of one group of filters.
type groupTally struct {
	// depth[j]: candidates whose first j filters match, not the next; an
	// array, so that indexing it by a trailing-zero count needs no bounds
	// check (one increment per candidate and group).
	depth *[MaxFilters + 1]uint64
	// alone[i]: candidates that filter i matches.
	alone []uint64
	// What the address lines that marked key lines take over added to
	// the counts above, to be taken back out when the reports are
	// finished: each such line was counted as a one-element candidate
	// matching the filters of its key's hash.
	undoDepth []uint64
	undoAlone []uint64
	// matches are the candidates that match every filter, in increasing
	// line order, at most the group's limit; truncated is true if more
	// did. delist are the taken-over address lines that did.
	matches   []MatchedCandidate
	truncated bool
	delist    []string
}

// NewAccumulator returns an accumulator for groups of filters, each group
// analyzed as Analyze analyzes its filters (a candidate must match every
// filter of the group). It holds the filters without changing them (the
// reading goroutines test copies); the caller must not change them while
// the accumulator is in use.
func NewAccumulator(groups [][]*bip37.Filter, opts AnalyzeOptions) (*Accumulator, error) {
	if len(groups) == 0 {
		return nil, ErrNoFilters
	}
	for g, filters := range groups {
		if len(filters) == 0 {
			return nil, fmt.Errorf("%w (group %d)", ErrNoFilters, g+1)
		}
		if len(filters) > MaxFilters {
			return nil, fmt.Errorf("privacy: group %d: %d filters, at most %d", g+1, len(filters), MaxFilters)
		}
	}
	if opts.MaxMatches <= 0 {
		opts.MaxMatches = DefaultMaxMatches
	}
	s := &groupSet{filters: groups, opts: opts, full: make([]uint64, len(groups)), limit: make([]int, len(groups))}
	for g, filters := range groups {
		s.full[g] = ^uint64(0) >> (64 - len(filters))
		// A group that matches everything lists nothing: its matches
		// reveal nothing, and listing them for many such sessions would
		// hold the universe in memory.
		if slices.ContainsFunc(filters, func(f *bip37.Filter) bool { return !matchesAll(f) }) {
			s.limit[g] = opts.MaxMatches
		}
	}
	s.copies = countCopies(groups)
	return &Accumulator{set: s, scan: universe.Scan{BadLines: []universe.BadLine{}}, t: s.newTally()}, nil
}

// countCopies counts, for each group, the groups whose filters are the
// same as its own, in the same order, bit for bit (itself among them).
func countCopies(groups [][]*bip37.Filter) []int {
	keys := make([][sha256.Size]byte, len(groups))
	seen := make(map[[sha256.Size]byte]int, len(groups))
	for g, filters := range groups {
		h := sha256.New()
		var head [17]byte
		for _, f := range filters {
			// Every field, the bits' length first: filters that differ in
			// anything hash apart, whatever their size.
			m := f.MsgFilterLoad()
			binary.LittleEndian.PutUint64(head[0:], uint64(len(m.Filter)))
			binary.LittleEndian.PutUint32(head[8:], m.HashFuncs)
			binary.LittleEndian.PutUint32(head[12:], m.Tweak)
			head[16] = byte(m.Flags)
			h.Write(head[:])
			h.Write(m.Filter)
		}
		h.Sum(keys[g][:0])
		seen[keys[g]]++
	}
	copies := make([]int, len(groups))
	for g := range groups {
		copies[g] = seen[keys[g]]
	}
	return copies
}

// fingerprint returns the hash of what makes two accumulators' counts
// combinable: the filters of every group, the pair test and the match
// limit.
func (s *groupSet) fingerprint() [sha256.Size]byte {
	if s.hasID {
		return s.id
	}
	h := sha256.New()
	fmt.Fprintf(h, "pair test %v, max matches %d, %d groups\n", s.opts.PairTest, s.opts.MaxMatches, len(s.filters))
	for _, filters := range s.filters {
		fmt.Fprintf(h, "%d filters\n", len(filters))
		for _, f := range filters {
			// Encoding to a hash cannot fail.
			_ = f.MsgFilterLoad().BtcEncode(h, wire.ProtocolVersion, wire.BaseEncoding)
		}
	}
	h.Sum(s.id[:0])
	s.hasID = true
	return s.id
}

// newTally returns zero counts for the groups, every counter of them in
// one block padded by a cache line at both ends: small separate
// allocations of two goroutines would share cache lines, and each
// candidate writes to them.
func (s *groupSet) newTally() *tally {
	const pad = 8
	size := 2 * pad
	for _, filters := range s.filters {
		size += MaxFilters + 1 + 3*len(filters) + 1
	}
	block := make([]uint64, size)[pad:]
	carve := func(n int) []uint64 {
		c := block[:n:n]
		block = block[n:]
		return c
	}
	t := &tally{groups: make([]groupTally, len(s.filters))}
	for g, filters := range s.filters {
		nf := len(filters)
		t.groups[g] = groupTally{depth: (*[MaxFilters + 1]uint64)(carve(MaxFilters + 1)),
			undoDepth: carve(nf + 1), alone: carve(nf), undoAlone: carve(nf)}
	}
	return t
}

// ReadUniverse tests every candidate of the universe r (see
// universe.Parser.Parse for its line format) against every group, as a
// node that received the filters would, in AnalyzeOptions.Workers
// goroutines and constant memory (only the matches are kept). Its lines
// are numbered after those read before: reading two files one after the
// other is reading their concatenation. Lines that are not candidates are
// skipped and counted, unless AnalyzeOptions.Strict; a universe without
// candidates is not an error until Reports. On an error the accumulator is
// left as it was.
func (a *Accumulator) ReadUniverse(r io.Reader) error {
	var readers []*reader
	opts := universe.ReadOptions{Workers: a.set.opts.Workers, Strict: a.set.opts.Strict}
	scan, err := universe.ReadParallel(r, opts, func(int) universe.Visitor {
		rd := a.set.newReader()
		readers = append(readers, rd)
		return rd
	})
	if err != nil {
		return err
	}
	offset := int(a.scan.LinesRead)
	a.dropPriors()
	for _, rd := range readers {
		a.t.add(rd.t, offset, a.set.limit)
	}
	a.scan.Append(scan)
	return nil
}

// Merge adds what o read to a, as if o's universe followed a's: o's lines
// are numbered after a's. The accumulators must be of the same groups of
// filters and options (ErrMismatch otherwise). o is not changed.
func (a *Accumulator) Merge(o *Accumulator) error {
	if o.set.fingerprint() != a.set.fingerprint() {
		return fmt.Errorf("%w: merging the counts of other filters", ErrMismatch)
	}
	a.t.add(o.t, int(a.scan.LinesRead), a.set.limit)
	a.scan.Append(&o.scan)
	a.dropPriors()
	return nil
}

// dropPriors forgets the priors fitted on the counts before they changed.
func (a *Accumulator) dropPriors() {
	a.fitMu.Lock()
	a.fit = nil
	a.fitMu.Unlock()
}

// add adds o's counts to t, o's lines numbered after lineOffset ones; the
// matches of each group stay in line order, at most limit[g] of them.
func (t *tally) add(o *tally, lineOffset int, limit []int) {
	for i := range t.classes {
		t.classes[i] += o.classes[i]
	}
	t.pairs += o.pairs
	t.undoLines += o.undoLines
	for g := range t.groups {
		tg, og := &t.groups[g], &o.groups[g]
		for j := range tg.undoDepth {
			tg.depth[j] += og.depth[j]
			tg.undoDepth[j] += og.undoDepth[j]
		}
		for i := range tg.alone {
			tg.alone[i] += og.alone[i]
			tg.undoAlone[i] += og.undoAlone[i]
		}
		tg.delist = append(tg.delist, og.delist...)
		tg.truncated = tg.truncated || og.truncated
		n := len(tg.matches)
		for _, m := range og.matches {
			m.Line += lineOffset
			tg.matches = append(tg.matches, m)
		}
		if n > 0 && n < len(tg.matches) && tg.matches[n-1].Line > tg.matches[n].Line {
			slices.SortFunc(tg.matches, func(x, y MatchedCandidate) int { return x.Line - y.Line })
		}
		if len(tg.matches) > limit[g] {
			tg.matches, tg.truncated = tg.matches[:limit[g]], true
		}
	}
}

// Reports finishes what was read into one report per group, in the order
// of the groups: the counts less what marked key lines take over, the
// expected false positives, the probabilities of the matches, the
// warnings and the verdict. A universe without candidates is ErrEmpty of
// package universe.
func (a *Accumulator) Reports() ([]*Report, error) {
	reports, _, err := a.finishReports()
	return reports, err
}

// finishReports is Reports, and the warnings of the sessions' fit of
// the size prior (see priorWarning and priorShift.warning) that every
// report carries: a capture report says them once, as the capture's.
func (a *Accumulator) finishReports() ([]*Report, []string, error) {
	u, err := a.finished()
	if err != nil {
		return nil, nil, err
	}
	reports := make([]*Report, len(a.set.filters))
	for g := range reports {
		reports[g] = a.report(g, u)
	}
	// The matches' probabilities are weighed over the wallet's sizes
	// under the prior the sessions' own counts give.
	fit := a.priors(u, reports)
	for _, r := range reports {
		r.sizes, r.mix, r.classes = fit.sizes, fit.mix, u.classes
		r.finish(r.joint)
	}
	n := a.sessionGroups()
	sessions := reportSessions(reports[:n], a.set)
	var warns []string
	for _, w := range []string{priorWarning(sessions), measurePriorShift(reports[:n], sessions, u.size, fit.sizes).warning()} {
		if w != "" {
			warns = append(warns, w)
		}
	}
	for _, r := range reports {
		r.Warnings = append(r.Warnings, warns...)
	}
	return reports, warns, nil
}

// universeCounts is what every report of one finishing shares.
type universeCounts struct {
	scan *universe.Scan
	// classes counts the candidates by class, less the address lines that
	// marked key lines take over; size is the report's UniverseSize.
	classes []uint64
	size    uint64
}

// finished returns what the reports share, or ErrEmpty for a universe
// without candidates.
func (a *Accumulator) finished() (*universeCounts, error) {
	if err := a.scan.RequireCandidates(); err != nil {
		return nil, err
	}
	scan := a.scan
	scan.BadLines = slices.Clone(a.scan.BadLines)
	u := &universeCounts{scan: &scan, classes: slices.Clone(a.t.classes[:])}
	// The counts cannot go below zero even for a universe whose "listed"
	// fields name lines it lacks.
	u.classes[1] -= min(u.classes[1], a.t.undoLines)
	u.size = scan.CandidatesTested - min(scan.CandidatesTested, a.t.undoLines)
	return u, nil
}

// report gathers the counts of group g into its report, whose matches
// finish weighs once the priors fitted over all the groups are known.
func (a *Accumulator) report(g int, u *universeCounts) *Report {
	tg := &a.t.groups[g]
	filters := a.set.filters[g]
	nf := len(filters)
	r := &Report{PairTest: a.set.opts.PairTest, MatchedTruncated: tg.truncated, Universe: u.scan,
		Matched: []MatchedCandidate{}, Warnings: []string{}, // [] rather than null in JSON
		UniverseSize: u.size, Pairs: a.t.pairs, MergedAddressLines: a.t.undoLines}
	r.Matched = append(r.Matched, tg.delisted()...)
	for i, f := range filters {
		alone := tg.alone[i] - min(tg.alone[i], tg.undoAlone[i])
		r.Filters = append(r.Filters, filterReport(i+1, f, alone, u.classes))
	}
	// Intersection steps: candidates matching the first j filters are
	// those whose prefix depth is at least j.
	var atLeast uint64
	suffix := make([]uint64, nf+1)
	for j := nf; j >= 0; j-- {
		atLeast += tg.depth[j] - min(tg.depth[j], tg.undoDepth[j])
		suffix[j] = atLeast
	}
	var joint *jointRates
	for j := 1; j <= nf; j++ {
		joint = joint.with(filters[j-1])
		r.Intersection = append(r.Intersection, intersectionStep(j, suffix[j], joint, u.classes))
	}
	r.totals(joint)
	return r
}

// delisted returns the matches less the address lines that marked key
// lines took over, the first of each address by line.
func (tg *groupTally) delisted() []MatchedCandidate {
	if len(tg.delist) == 0 {
		return tg.matches
	}
	delist := map[string]int{}
	for _, addr := range tg.delist {
		delist[addr]++
	}
	kept := make([]MatchedCandidate, 0, len(tg.matches))
	for _, m := range tg.matches {
		if m.Kind == universe.KindAddress && m.PubKey == "" && delist[m.Candidate] > 0 {
			delist[m.Candidate]--
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// markedPair tests a key line marked as the pair of an address: the
// address's single candidate, tested by the key and its hash (both under
// the pair test, else either). It records in tg what each address line
// the key line takes over added to the counts: those lines were counted
// as one-element candidates matching where the key's hash matches. Memory
// stays constant: a line names what it takes over, nothing is looked up.
func (tg *groupTally) markedPair(matchers []*bip37.Filter, c *universe.Candidate, pair bool, full uint64) uint64 {
	var keyMask, hashMask uint64
	for i, m := range matchers {
		if m.Contains(c.Elems[0]) {
			keyMask |= 1 << i
		}
		if m.Contains(c.Elems[1]) {
			hashMask |= 1 << i
		}
	}
	mask := keyMask | hashMask
	if pair {
		mask = keyMask & hashMask
	}
	for i := range matchers {
		if mask&(1<<i) != 0 {
			tg.alone[i]++
		}
	}
	for _, a := range c.Listed {
		tg.undoDepth[bits.TrailingZeros64(^hashMask)]++
		for i := range matchers {
			if hashMask&(1<<i) != 0 {
				tg.undoAlone[i]++
			}
		}
		if hashMask == full {
			tg.delist = append(tg.delist, string(a))
		}
	}
	return mask
}
