package privacybeam

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/spvfilter/spvfilter/privacy/attack"
)

// statePayload is an accumulator's counts (attack.Accumulator's
// MarshalJSON) as they travel between stages: of one universe file (Part
// is the file) for a session group, or of all the files for a session
// group (Part is the group).
type statePayload struct {
	Part  int             `json:"part"`
	State json.RawMessage `json:"state"`
}

// captureFn is the part of a DoFn that needs the capture's sessions,
// read on each worker.
type captureFn struct {
	Config Config
	job    *job
}

func (f *captureFn) Setup(ctx context.Context) error {
	var err error
	f.job, err = loadJob(ctx, &f.Config)
	return err
}

// newPart returns an empty accumulator of session group g.
func (f *captureFn) newPart(g int) (*attack.Accumulator, error) {
	groups := f.job.part(f.Config.sessionsPerShard(), g)
	if groups == nil {
		return nil, fmt.Errorf("privacybeam: session group %d is empty", g)
	}
	return attack.NewAccumulator(groups, f.Config.analyzeOptions())
}

func (c *Config) sessionsPerShard() int {
	if c.SessionsPerShard == 0 {
		return DefaultSessionsPerShard
	}
	return c.SessionsPerShard
}

func (c *Config) analyzeOptions() attack.AnalyzeOptions {
	return attack.AnalyzeOptions{PairTest: c.PairTest, MaxMatches: c.MaxMatches, Workers: c.Workers}
}

// analyzeFn reads one universe file for one group of sessions into an
// attack.Accumulator.
type analyzeFn struct{ captureFn }

func (f *analyzeFn) ProcessElement(ctx context.Context, t shardTask, emit func(int, []byte)) error {
	acc, err := f.newPart(t.Group)
	if err != nil {
		return err
	}
	r, err := openRead(ctx, t.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := acc.ReadUniverse(r); err != nil {
		return fmt.Errorf("universe %s: %w", t.Path, err)
	}
	payload, err := marshalState(t.File, acc)
	if err != nil {
		return err
	}
	emit(t.Group, payload)
	return nil
}

// mergeFn merges the shards of one session group, in the order of their
// files, and sends the group's counts on.
type mergeFn struct {
	captureFn
	// Files is the number of universe files: one shard of each.
	Files int
}

func (f *mergeFn) ProcessElement(ctx context.Context, group int, shards func(*[]byte) bool, emit func([]byte)) error {
	newPart := func(int) (*attack.Accumulator, error) { return f.newPart(group) }
	byFile, err := readParts(fmt.Sprintf("group %d: universe file", group), f.Files, shards, newPart)
	if err != nil {
		return err
	}
	total, err := f.newPart(group)
	if err != nil {
		return err
	}
	for _, acc := range byFile {
		if err := total.Merge(acc); err != nil {
			return err
		}
	}
	payload, err := marshalState(group, total)
	if err != nil {
		return err
	}
	emit(payload)
	return nil
}

// writeFn joins the session groups' counts into one accumulator of every
// session, finishes the report from it and writes it.
type writeFn struct{ captureFn }

func (f *writeFn) ProcessElement(ctx context.Context, _ int, groups func(*[]byte) bool) error {
	parts, err := readParts("session group", f.job.parts(f.Config.sessionsPerShard()), groups, f.newPart)
	if err != nil {
		return err
	}
	acc, err := attack.Join(parts...)
	if err != nil {
		return err
	}
	out, err := attack.NewCaptureReport(f.job.sessions, acc, f.Config.reportOptions())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := out.WriteJSON(&buf); err != nil {
		return err
	}
	fs, err := filesystem.New(ctx, f.Config.Output)
	if err != nil {
		return err
	}
	defer fs.Close()
	if err := filesystem.Write(ctx, fs, f.Config.Output, buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", f.Config.Output, err)
	}
	return nil
}

func (c *Config) reportOptions() attack.ReportOptions {
	return attack.ReportOptions{Intersect: c.Intersect, Link: c.Link, LinkThreshold: c.LinkThreshold}
}

// marshalState is the payload of acc's counts as part part.
func marshalState(part int, acc *attack.Accumulator) ([]byte, error) {
	state, err := json.Marshal(acc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(statePayload{Part: part, State: state})
}

// readParts reads the payloads of parts 0..n-1, each into the empty
// accumulator newPart returns for it, and returns them in the order of
// the parts. A part named twice, out of range or missing is an error that
// names it as a what.
func readParts(what string, n int, payloads func(*[]byte) bool, newPart func(int) (*attack.Accumulator, error)) ([]*attack.Accumulator, error) {
	parts := make([]*attack.Accumulator, n)
	var b []byte
	for payloads(&b) {
		var sp statePayload
		if err := json.Unmarshal(b, &sp); err != nil {
			return nil, fmt.Errorf("privacybeam: %s: %w", what, err)
		}
		if sp.Part < 0 || sp.Part >= n || parts[sp.Part] != nil {
			return nil, fmt.Errorf("privacybeam: %s %d: a second time, or not one of %d", what, sp.Part, n)
		}
		acc, err := newPart(sp.Part)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(sp.State, acc); err != nil {
			return nil, fmt.Errorf("privacybeam: %s %d: %w", what, sp.Part, err)
		}
		parts[sp.Part] = acc
	}
	for i, acc := range parts {
		if acc == nil {
			return nil, fmt.Errorf("privacybeam: %s %d: missing", what, i)
		}
	}
	return parts, nil
}
