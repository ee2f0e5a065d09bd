package simulate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// The names of a simulation's files in its directory.
const (
	UniverseFile     = "universe.txt"
	CaptureFile      = "capture.jsonl"
	LabelsFile       = "labels.json"
	IndexFile        = "chain.idx"
	FetchCaptureFile = "fetch-capture.jsonl"
)

// captureEpoch is the time of a simulated capture's first record.
var captureEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// OutputFile is a file of a simulation: its name in the simulation's
// directory, what writes it, and where Files holds its path.
type OutputFile struct {
	Name string
	// Fetch says only a simulation with a BIP 157 side has the file.
	Fetch bool
	Write func(*Scenario, io.Writer) error
	// Path is the field of f that holds the file's path.
	Path func(f *Files) *string
}

// OutputFiles are the files of a simulation, in the order they are
// listed in Files.
func OutputFiles() []OutputFile {
	return []OutputFile{
		{UniverseFile, false, (*Scenario).WriteUniverse, func(f *Files) *string { return &f.Universe }},
		{CaptureFile, false, (*Scenario).WriteCapture, func(f *Files) *string { return &f.Capture }},
		{LabelsFile, false, func(s *Scenario, w io.Writer) error { return s.Labels.Write(w) }, func(f *Files) *string { return &f.Labels }},
		{IndexFile, true, (*Scenario).WriteIndex, func(f *Files) *string { return &f.Index }},
		{FetchCaptureFile, true, (*Scenario).WriteFetchCapture, func(f *Files) *string { return &f.FetchCapture }},
	}
}

// files are the names of the simulation's files.
func (s *Scenario) files() Files {
	var f Files
	for _, of := range OutputFiles() {
		if !of.Fetch || s.fetch != nil {
			*of.Path(&f) = of.Name
		}
	}
	return f
}

// WriteUniverse writes the universe: the candidates package universe's
// writer extracts from the chain's blocks, as "privacy universe" does.
func (s *Scenario) WriteUniverse(w io.Writer) error {
	if _, err := w.Write(s.universe); err != nil {
		return fmt.Errorf("universe: %w", err)
	}
	return nil
}

// WriteIndex writes the chain's appearance index (package universe's
// format, as "privacy universe --index" writes it from the same blocks:
// every appearance with the position of its transaction in the block,
// index version 2). Without a BIP 157 side it writes nothing.
func (s *Scenario) WriteIndex(w io.Writer) error {
	if s.fetch == nil {
		return nil
	}
	if _, err := w.Write(s.index); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// indexCandidates counts the candidates of the chain's index.
func (s *Scenario) indexCandidates() int {
	ir, err := universe.NewIndexReader(bytes.NewReader(s.index))
	if err != nil {
		return 0
	}
	n := 0
	for {
		if _, err := ir.Next(); err != nil {
			return n
		}
		n++
	}
}

// WriteCapture writes the BIP 37 capture: every session's filterload and
// filteradd records, session after session, as "privacy capture" writes
// them.
func (s *Scenario) WriteCapture(w io.Writer) error {
	enc := json.NewEncoder(w)
	for i, sp := range s.sessions {
		t := captureEpoch.Add(time.Duration(i) * time.Minute)
		rec, err := capture.NewFilterLoadRecord(t, sp.label.Client, sp.label.ID, s.filter(sp).MsgFilterLoad())
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		if err := enc.Encode(rec); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		for j, e := range sp.added {
			rec := capture.Record{Time: t.Add(time.Duration(j+1) * time.Second), Client: sp.label.Client, Session: sp.label.ID,
				Command: capture.CmdFilterAdd, Data: hex.EncodeToString(e)}
			if err := enc.Encode(rec); err != nil {
				return fmt.Errorf("capture: %w", err)
			}
		}
	}
	return nil
}

// filter builds the session's filterload, before any filteradd.
func (s *Scenario) filter(sp *sessionSpec) *bip37.Filter {
	var f *bip37.Filter
	var err error
	switch sp.label.Kind {
	case KindEmpty:
		f, err = bip37.NewFilterFromParams(nil, 0, sp.tweak, wire.BloomUpdateNone)
	case KindFull:
		f, err = bip37.NewFilterFromParams([]byte{0xff}, 3, sp.tweak, wire.BloomUpdateNone)
	case KindTiny:
		f, err = bip37.NewFilterFromParams(make([]byte, 2), 1, sp.tweak, wire.BloomUpdateNone)
	default:
		size, k := s.opts.Sizing.Size(uint32(sp.label.SizedFor), sp.label.FPRate)
		f, err = bip37.NewFilterFromParams(make([]byte, size), k, sp.tweak, wire.BloomUpdateP2PubkeyOnly)
	}
	if err != nil {
		panic(err) // sizes and hash counts are within the limits by construction
	}
	elems := sp.loaded
	if sp.label.Kind != KindWallet {
		elems = randomElements(sp.randSeed, sp.randElems, s.opts.ElementsPerAddress)
	}
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

// WriteFetchCapture writes the BIP 157 capture: per session, the filter
// headers from the genesis block (a client syncs them all, whatever it
// scans), the filters of its scanned range (getcfheaders, getcfilters),
// then the blocks it fetched (getdata), as "privacy capture" records
// them. Without a BIP 157 side it writes nothing.
func (s *Scenario) WriteFetchCapture(w io.Writer) error {
	if s.fetch == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	basic := uint8(0)
	hashes := s.chain.hashes
	tip := int32(len(hashes) - 1)
	for i, fs := range s.fetch.sessions {
		t := captureEpoch.Add(time.Duration(i) * time.Minute)
		rec := func(r capture.Record) error {
			r.Time, r.Client, r.Session = t, fs.Client, fs.ID
			if err := enc.Encode(r); err != nil {
				return fmt.Errorf("fetch capture: %w", err)
			}
			return nil
		}
		for _, batch := range []struct {
			cmd      string
			size     int32
			from, to int32
		}{{capture.CmdGetCFHeaders, cfHeadersBatch, 0, tip}, {capture.CmdGetCFilters, cfiltersBatch, fs.ScannedFrom, fs.ScannedTo}} {
			for from := batch.from; from <= batch.to; from += batch.size {
				start := uint32(from)
				stop := min(from+batch.size-1, batch.to)
				if err := rec(capture.Record{Command: batch.cmd, FilterType: &basic, StartHeight: &start,
					StopHash: hashes[stop].String()}); err != nil {
					return err
				}
			}
		}
		fetched := slices.Concat(fs.WalletHeights, fs.DecoyHeights, fs.FalsePositiveHeights, fs.CoverHeights)
		slices.Sort(fetched)
		for part := range slices.Chunk(fetched, getDataBatch) {
			var blocks []capture.BlockRequest
			for _, h := range part {
				blocks = append(blocks, capture.BlockRequest{Hash: hashes[h].String(), Type: "witness_block"})
			}
			if err := rec(capture.Record{Command: capture.CmdGetData, Blocks: blocks}); err != nil {
				return err
			}
		}
	}
	return nil
}
