package privacybeam

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// A public key line marked "# pair ADDRESS, listed ADDRESS ..." takes the
// address lines it lists out of the analysis: AnalyzeGroups takes their
// counts back out where it reads the key, and drops them from the matches.
// When the key and the address are in two universe files, neither shard
// can do that alone; analyzeShard and the merge do it together.

// keyListing is an address that a marked key line lists, with the key's
// HASH160, the one element the address is tested by.
type keyListing struct {
	address string
	hash    string // hex: a universe line that matches as the address does
}

// readListings returns the listings of a universe file's marked key
// lines, in order, and the file's number of lines.
func readListings(r io.Reader) ([]keyListing, int, error) {
	var out []keyListing
	br := bufio.NewReaderSize(r, 64<<10)
	var p universe.Parser
	marker := []byte("listed ")
	lines := 0
	for {
		line, err := br.ReadSlice('\n')
		long := false
		for err == bufio.ErrBufferFull {
			long = true // longer than a candidate may be: not a key line
			line, err = br.ReadSlice('\n')
		}
		if len(line) > 0 || long {
			lines++
		}
		if !long && bytes.Contains(line, marker) {
			if c, perr := p.Parse(bytes.TrimSuffix(line, []byte{'\n'})); perr == nil && c != nil && c.PairAddress != nil {
				for _, a := range c.Listed {
					out = append(out, keyListing{address: string(a), hash: hex.EncodeToString(c.Elems[1])})
				}
			}
		}
		if err == io.EOF {
			return out, lines, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading universe: %w", err)
		}
	}
}

// hashLines is a universe of the listings' hashes, one a line.
func hashLines(listings []keyListing) string {
	var b strings.Builder
	for _, l := range listings {
		b.WriteString(l.hash)
		b.WriteByte('\n')
	}
	return b.String()
}

// shardCounts are a report's counts for one session before privacy takes
// the listed address lines out: Alone[i] the candidates that filter i
// alone matches, Depth[d] those whose first d filters match but not the
// next (d >= 1; Depth[0] is not needed).
type shardCounts struct {
	Alone []uint64 `json:"alone"`
	Depth []uint64 `json:"depth"`
}

// reportCounts are the counts of a report.
func reportCounts(r *attack.Report) shardCounts {
	nf := len(r.Filters)
	c := shardCounts{Alone: make([]uint64, nf), Depth: make([]uint64, nf+1)}
	for i, f := range r.Filters {
		c.Alone[i] = f.Matched
	}
	for j, st := range r.Intersection {
		c.Depth[j+1] = st.Matched
		if j+1 < nf {
			c.Depth[j+1] -= r.Intersection[j+1].Matched
		}
	}
	return c
}

// analyzeShard analyzes one universe file for the groups of filters with
// attack.AnalyzeGroups, so that the shards add up to one pass over all
// the files. open opens the file; it is read twice.
//
// privacy takes a marked key line's listed address lines out of the counts
// of the file that holds the key, and keeps a count from going below zero,
// which it would when the address lines are in another file. So the file
// is analyzed with a line of the key's hash appended for each listing: it
// counts exactly as the listed address does, so the counts come out as the
// file's own lines make them. The hash lines alone, a second analysis, are
// what the merge takes out of the whole universe's counts, and their
// matches name the listed addresses one pass drops from the matches.
func analyzeShard(open func() (io.ReadCloser, error), file int, groups [][]*bip37.Filter, opts attack.AnalyzeOptions) (*shardPayload, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	listings, lines, err := readListings(r)
	r.Close()
	if err != nil {
		return nil, err
	}
	if r, err = open(); err != nil {
		return nil, err
	}
	defer r.Close()
	sp := &shardPayload{File: file, Appended: len(listings)}
	var u io.Reader = r
	hashes := hashLines(listings)
	withHashes := opts
	if len(listings) > 0 {
		// The newline ends a last line without one, or adds a blank line.
		u = io.MultiReader(r, strings.NewReader("\n"+hashes))
		if withHashes.MaxMatches <= 0 {
			withHashes.MaxMatches = attack.DefaultMaxMatches
		}
		withHashes.MaxMatches += len(listings)
	}
	reps, err := attack.AnalyzeGroups(groups, u, withHashes)
	if errors.Is(err, universe.ErrEmpty) {
		return sp, nil // the file adds only its lines, which countFn counts
	}
	if err != nil {
		return nil, err
	}
	sp.Reports = reps
	if len(listings) == 0 {
		return sp, nil
	}
	for _, rep := range reps {
		kept := rep.Matched[:0]
		for _, m := range rep.Matched {
			if m.Line <= lines {
				kept = append(kept, m)
			}
		}
		rep.Matched = kept
	}
	undo, err := attack.AnalyzeGroups(groups, strings.NewReader(hashes),
		attack.AnalyzeOptions{PairTest: opts.PairTest, Workers: opts.Workers, MaxMatches: len(listings)})
	if err != nil {
		return nil, fmt.Errorf("listed addresses: %w", err)
	}
	for _, u := range undo {
		sp.Undo = append(sp.Undo, reportCounts(u))
		full := []string{}
		for _, m := range u.Matched {
			full = append(full, listings[m.Line-1].address)
		}
		sp.Delisted = append(sp.Delisted, full)
	}
	return sp, nil
}

// delistAcrossFiles drops from matched (sorted by line, numbered across
// the files) the address lines that one pass over all the files would have
// dropped, but the shard of each file could not: each address matched E_f
// times in file f and listed D_f times there keeps Σ_f max(E_f - D_f, 0)
// entries after the shards, where one pass keeps max(E - D, 0). Those
// dropped are the first by line, as one pass in order drops them.
// fileOf gives the file of a line.
func delistAcrossFiles(matched []attack.MatchedCandidate, listings map[string][]int, fileOf func(line int) int) []attack.MatchedCandidate {
	if len(listings) == 0 {
		return matched
	}
	type tally struct{ entries, listed map[int]int }
	byAddr := map[string]*tally{}
	for _, m := range matched {
		files, ok := listings[m.Candidate]
		if !ok || m.Kind != universe.KindAddress || m.PubKey != "" {
			continue
		}
		t := byAddr[m.Candidate]
		if t == nil {
			t = &tally{entries: map[int]int{}, listed: map[int]int{}}
			for _, f := range files {
				t.listed[f]++
			}
			byAddr[m.Candidate] = t
		}
		t.entries[fileOf(m.Line)]++
	}
	drop := map[string]int{}
	for a, t := range byAddr {
		var e, d, kept int
		for f, n := range t.entries {
			e += n
			kept += max(n-t.listed[f], 0)
		}
		for _, n := range t.listed {
			d += n
		}
		if extra := kept - max(e-d, 0); extra > 0 {
			drop[a] = extra
		}
	}
	if len(drop) == 0 {
		return matched
	}
	out := matched[:0:0]
	for _, m := range matched {
		if n := drop[m.Candidate]; n > 0 && m.Kind == universe.KindAddress && m.PubKey == "" {
			drop[m.Candidate] = n - 1
			continue
		}
		out = append(out, m)
	}
	return out
}

// fileOfLine returns the file of a line numbered across the files whose
// first lines follow offsets: the last file with fewer lines before it.
func fileOfLine(offsets []int) func(int) int {
	return func(line int) int {
		i, _ := slices.BinarySearch(offsets, line)
		return i - 1
	}
}
