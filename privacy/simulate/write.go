package simulate

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spvfilter/spvfilter/privacy/capture"
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
	if s.chain != nil {
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
		if s.chain == nil && (w.name == IndexFile || w.name == FetchCaptureFile) {
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

// WriteUniverse writes the universe: one address a line, the wallets'
// among random P2PKH and P2WPKH addresses, in the format package universe
// reads.
func (s *Scenario) WriteUniverse(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "# simulated universe: %d candidates (spvfilter privacy simulate, seed %d)\n", s.Labels.UniverseSize, s.opts.Seed)
	rng := newRand(s.opts.Seed, streamUniverse+0x100)
	var h [24]byte
	for i := range s.Labels.UniverseSize {
		a := s.positions[i]
		if a == "" {
			fillRandom(rng, h[:])
			a = addressOf(h[:20], h[20]&1 == 1)
		}
		if _, err := bw.WriteString(a + "\n"); err != nil {
			return fmt.Errorf("universe: %w", err)
		}
	}
	return bw.Flush()
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
		for j, e := range s.addedElements(sp) {
			rec := capture.Record{Time: t.Add(time.Duration(j+1) * time.Second), Client: sp.label.Client, Session: sp.label.ID,
				Command: capture.CmdFilterAdd, Data: hex.EncodeToString(e)}
			if err := enc.Encode(rec); err != nil {
				return fmt.Errorf("capture: %w", err)
			}
		}
	}
	return nil
}
