package leak_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// entrySource is a Source over entries held in memory.
type entrySource struct {
	hd      *universe.IndexHeader
	entries []*universe.IndexEntry
}

func (s *entrySource) Header() *universe.IndexHeader { return s.hd }

func (s *entrySource) Next() (*universe.IndexEntry, error) {
	if len(s.entries) == 0 {
		return nil, io.EOF
	}
	e := s.entries[0]
	s.entries = s.entries[1:]
	return e, nil
}

// readAll reads an index into memory.
func readAll(t testing.TB, index []byte) *entrySource {
	t.Helper()
	ir, err := universe.NewIndexReader(bytes.NewReader(index))
	if err != nil {
		t.Fatal(err)
	}
	s := &entrySource{hd: ir.Header()}
	for {
		e, err := ir.Next()
		if err == io.EOF {
			return s
		}
		if err != nil {
			t.Fatal(err)
		}
		s.entries = append(s.entries, e)
	}
}

// viewsOf turns captured sessions into views by the index's heights:
// their getcfilters ranges and their fetched blocks.
func viewsOf(t testing.TB, sessions []*capture.FetchSession, hd *universe.IndexHeader) []leak.View {
	t.Helper()
	height := map[[32]byte]int32{}
	for i, h := range hd.Hashes {
		height[h] = hd.First + int32(i)
	}
	views := make([]leak.View, len(sessions))
	for i, s := range sessions {
		v := leak.View{ID: s.ID, Client: s.Client}
		for _, b := range s.Blocks {
			if h, ok := height[b]; ok {
				v.Fetched = append(v.Fetched, h)
			}
		}
		for _, r := range s.Ranges {
			if stop, ok := height[r.StopHash]; ok && r.Command == capture.CmdGetCFilters {
				v.Scanned = append(v.Scanned, leak.HeightRange{From: max(int32(r.StartHeight), hd.First), To: stop})
			}
		}
		views[i] = v
	}
	return views
}

// TestAnalyzeSource: Analyze gives the same reports from any Source of
// the same entries, an index file or entries held in memory.
func TestAnalyzeSource(t *testing.T) {
	_, sessions, index := simulatedFetches(t, simulate.RegimeStandard, 3)
	ir, err := universe.NewIndexReader(bytes.NewReader(index))
	if err != nil {
		t.Fatal(err)
	}
	views := viewsOf(t, sessions, ir.Header())
	var got [2][]byte
	for i, src := range []leak.Source{ir, readAll(t, index)} {
		reps, err := leak.Analyze(views, src, leak.Options{Intersect: true})
		if err != nil {
			t.Fatal(err)
		}
		if got[i], err = json.Marshal(reps); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got[0], got[1]) || len(got[0]) < 1000 {
		t.Fatalf("reports from the index file (%d bytes of JSON) and from memory (%d) differ", len(got[0]), len(got[1]))
	}
}
