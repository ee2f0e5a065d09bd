package simulate

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

func (s *Scenario) files() Files {
	f := Files{Universe: UniverseFile, Capture: CaptureFile, Labels: LabelsFile}
	if s.fetch != nil {
		f.Index, f.FetchCapture = IndexFile, FetchCaptureFile
	}
	return f
}

// WriteDir writes the simulation's files into dir, which it creates if
// needed, and returns their paths. Each file is written under a temporary
// name and renamed into place when complete.
func (s *Scenario) WriteDir(dir string) (Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("simulate: %w", err)
	}
	out := Files{}
	writers := []struct {
		name  string
		path  *string
		write func(io.Writer) error
	}{
		{UniverseFile, &out.Universe, s.WriteUniverse},
		{CaptureFile, &out.Capture, s.WriteCapture},
		{LabelsFile, &out.Labels, s.Labels.Write},
		{IndexFile, &out.Index, s.WriteIndex},
		{FetchCaptureFile, &out.FetchCapture, s.WriteFetchCapture},
	}
	for _, w := range writers {
		if s.fetch == nil && (w.name == IndexFile || w.name == FetchCaptureFile) {
			continue
		}
		*w.path = filepath.Join(dir, w.name)
		if err := writeFile(*w.path, w.write); err != nil {
			return Files{}, err
		}
	}
	return out, nil
}

// writeFile writes a file through write, under a temporary name first.
func writeFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("simulate: writing %s: %w", path, err)
	}
	return nil
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
