package privacybeam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	// Local files; a binary adds the filesystems of its runner (beamx adds gs://).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// DefaultSessionsPerShard is how many sessions one shard tests at once: the
// universe is parsed once per shard, so larger groups parse less, and every
// worker holds the group's filters.
const DefaultSessionsPerShard = 100

// ErrBadConfig reports a pipeline that cannot be built from its Config.
var ErrBadConfig = errors.New("privacybeam: bad configuration")

// Config is what the pipeline analyzes and where it writes the report.
// Paths are of any Beam filesystem the binary registers (local files here;
// spvfilter-beam adds gs://); the workers must be able to read them.
type Config struct {
	Capture  string // capture file of "privacy capture" (JSON lines)
	Universe string // glob of universe files, analyzed as their concatenation in name order
	Output   string // the report, the JSON of "privacy analyze --capture --json"
	// PairTest and MaxMatches are those of attack.AnalyzeOptions.
	PairTest   bool
	MaxMatches int
	// SessionsPerShard is the size of a session group (0:
	// DefaultSessionsPerShard).
	SessionsPerShard int
	// Workers is the parsing goroutines of each shard (0: privacy's
	// default).
	Workers int
}

// Plan is what a pipeline will do: the universe files and the groups of
// sessions, one shard for each pair.
type Plan struct {
	Files    []string
	Sessions int
	Groups   int
}

// Shards is the number of shards: files × session groups.
func (p *Plan) Shards() int { return len(p.Files) * p.Groups }

func init() {
	register.DoFn3x1[context.Context, shardTask, func(int, []byte), error](&analyzeFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&mergeFn{})
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&writeFn{})
	register.Emitter2[int, []byte]()
	register.Emitter1[[]byte]()
	register.Iter1[[]byte]()
	beam.RegisterType(reflect.TypeFor[shardTask]())
}

// shardTask is one universe file against one group of sessions.
type shardTask struct {
	Group int
	File  int
	Path  string
}

// shardPayload is a shard's result, carried between stages as JSON: the
// counts of the accumulator that read the file (attack.Accumulator's
// MarshalJSON).
type shardPayload struct {
	File  int             `json:"file"`
	State json.RawMessage `json:"state"`
}

// groupPayload is a group's merged reports.
type groupPayload struct {
	Group   int              `json:"group"`
	Reports []*attack.Report `json:"reports"`
}

// Build adds the analysis to the pipeline of s. It reads the capture and
// lists the universe files while building, so that bad input is refused
// before anything runs; the workers read them again.
func Build(ctx context.Context, s beam.Scope, cfg Config) (*Plan, error) {
	switch {
	case cfg.Capture == "" || cfg.Universe == "" || cfg.Output == "":
		return nil, fmt.Errorf("%w: a capture, a universe and an output are needed", ErrBadConfig)
	case cfg.SessionsPerShard < 0 || cfg.MaxMatches < 0 || cfg.Workers < 0 || cfg.Workers > universe.MaxWorkers:
		return nil, fmt.Errorf("%w: negative sessions per shard or matches, or workers not in 0..%d", ErrBadConfig, universe.MaxWorkers)
	}
	if cfg.SessionsPerShard == 0 {
		cfg.SessionsPerShard = DefaultSessionsPerShard
	}
	sessions, err := loadSessions(ctx, cfg.Capture)
	if err != nil {
		return nil, err
	}
	files, err := listFiles(ctx, cfg.Universe)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Files: files, Sessions: len(sessions), Groups: (len(sessions) + cfg.SessionsPerShard - 1) / cfg.SessionsPerShard}

	var shardTasks []shardTask
	for i, f := range files {
		for g := 0; g < plan.Groups; g++ {
			shardTasks = append(shardTasks, shardTask{Group: g, File: i, Path: f})
		}
	}
	s = s.Scope("spvfilter-privacy-analyze")
	// Reshuffle spreads the tasks, created in one bundle, over the workers.
	shards := beam.ParDo(s, &analyzeFn{captureFn{Config: cfg}}, beam.Reshuffle(s, beam.CreateList(s, shardTasks)))
	merged := beam.ParDo(s, &mergeFn{captureFn: captureFn{Config: cfg}, Files: len(files)}, beam.GroupByKey(s, shards))
	beam.ParDo0(s, &writeFn{captureFn{Config: cfg}}, beam.GroupByKey(s, beam.AddFixedKey(s, merged)))
	return plan, nil
}

// loadSessions reads the capture and its sessions, refusing a session that
// AnalyzeGroups cannot analyze.
func loadSessions(ctx context.Context, path string) ([]*capture.Session, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%w: capture: %w", ErrBadConfig, err)
	}
	records, err := capture.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, path, err)
	}
	sessions, err := capture.Sessions(records)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, path, err)
	}
	if len(sessions) == 0 {
		return nil, fmt.Errorf("%w: %s: no filterload recorded", ErrBadConfig, path)
	}
	for _, s := range sessions {
		if len(s.Filters) > attack.MaxFilters {
			return nil, fmt.Errorf("%w: session %s (%s) loaded %d filters, at most %d are analyzed together",
				ErrBadConfig, s.ID, s.Client, len(s.Filters), attack.MaxFilters)
		}
	}
	return sessions, nil
}

// groupFilters are the filters of the sessions of group g.
func groupFilters(sessions []*capture.Session, per, g int) ([]*capture.Session, [][]*bip37.Filter) {
	lo, hi := g*per, min((g+1)*per, len(sessions))
	if lo >= hi {
		return nil, nil
	}
	out := make([][]*bip37.Filter, 0, hi-lo)
	for _, s := range sessions[lo:hi] {
		out = append(out, s.BloomFilters())
	}
	return sessions[lo:hi], out
}

// listFiles expands the universe glob, in name order.
func listFiles(ctx context.Context, glob string) ([]string, error) {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: universe %s: %w", ErrBadConfig, glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: universe %s: %w", ErrBadConfig, glob, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: universe %s: no file matches", ErrBadConfig, glob)
	}
	slices.Sort(files)
	return files, nil
}

// readFile reads a whole file of any registered filesystem.
func readFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return filesystem.Read(ctx, fs, path)
}

// openRead opens a universe file of any registered filesystem.
func openRead(ctx context.Context, path string) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	return fileReader{r, fs}, nil
}

// fileReader closes its filesystem with the file.
type fileReader struct {
	io.ReadCloser
	fs io.Closer
}

func (f fileReader) Close() error {
	err := f.ReadCloser.Close()
	f.fs.Close()
	return err
}

// captureFn is the part of a DoFn that needs the capture's sessions,
// read on each worker.
type captureFn struct {
	Config   Config
	sessions []*capture.Session
}

func (f *captureFn) Setup(ctx context.Context) error {
	var err error
	f.sessions, err = loadSessions(ctx, f.Config.Capture)
	return err
}

// analyzeFn reads one universe file for one group of sessions into an
// attack.Accumulator.
type analyzeFn struct{ captureFn }

func (f *analyzeFn) ProcessElement(ctx context.Context, t shardTask, emit func(int, []byte)) error {
	_, groups := groupFilters(f.sessions, f.Config.sessionsPerShard(), t.Group)
	if groups == nil {
		return fmt.Errorf("privacybeam: session group %d is empty", t.Group)
	}
	acc, err := attack.NewAccumulator(groups, f.Config.analyzeOptions())
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
	state, err := json.Marshal(acc)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(shardPayload{File: t.File, State: state})
	if err != nil {
		return err
	}
	emit(t.Group, payload)
	return nil
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

// mergeFn merges the shards of one session group, in the order of their
// files, and finishes the group's reports.
type mergeFn struct {
	captureFn
	// Files is the number of universe files: one shard of each.
	Files int
}

func (f *mergeFn) ProcessElement(ctx context.Context, group int, parts func(*[]byte) bool, emit func([]byte)) error {
	_, groups := groupFilters(f.sessions, f.Config.sessionsPerShard(), group)
	opts := f.Config.analyzeOptions()
	byFile := make([]*attack.Accumulator, f.Files)
	var b []byte
	for parts(&b) {
		var sp shardPayload
		if err := json.Unmarshal(b, &sp); err != nil {
			return fmt.Errorf("privacybeam: group %d: %w", group, err)
		}
		if sp.File < 0 || sp.File >= f.Files || byFile[sp.File] != nil {
			return fmt.Errorf("privacybeam: group %d: a second shard of universe file %d, or a file out of %d", group, sp.File, f.Files)
		}
		acc, err := attack.NewAccumulator(groups, opts)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(sp.State, acc); err != nil {
			return fmt.Errorf("privacybeam: group %d, universe file %d: %w", group, sp.File, err)
		}
		byFile[sp.File] = acc
	}
	total, err := attack.NewAccumulator(groups, opts)
	if err != nil {
		return err
	}
	for i, acc := range byFile {
		if acc == nil {
			return fmt.Errorf("privacybeam: group %d: no shard of universe file %d", group, i)
		}
		if err := total.Merge(acc); err != nil {
			return err
		}
	}
	reps, err := total.Reports()
	if err != nil {
		return err
	}
	payload, err := json.Marshal(groupPayload{Group: group, Reports: reps})
	if err != nil {
		return err
	}
	emit(payload)
	return nil
}

// writeFn puts the groups' reports together and writes the report.
type writeFn struct{ captureFn }

func (f *writeFn) ProcessElement(ctx context.Context, _ int, groups func(*[]byte) bool) error {
	per := f.Config.sessionsPerShard()
	reports := make([]*attack.Report, len(f.sessions))
	var b []byte
	for groups(&b) {
		var gp groupPayload
		if err := json.Unmarshal(b, &gp); err != nil {
			return fmt.Errorf("privacybeam: reports: %w", err)
		}
		members, _ := groupFilters(f.sessions, per, gp.Group)
		if len(members) != len(gp.Reports) {
			return fmt.Errorf("privacybeam: group %d: %d reports for %d sessions", gp.Group, len(gp.Reports), len(members))
		}
		copy(reports[gp.Group*per:], gp.Reports)
	}
	for i, r := range reports {
		if r == nil {
			return fmt.Errorf("privacybeam: no report for session %s", f.sessions[i].ID)
		}
	}
	out, err := NewCaptureReport(f.sessions, reports)
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
