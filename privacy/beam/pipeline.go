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
	register.DoFn2x2[context.Context, fileTask, []byte, error](&countFn{})
	register.DoFn3x1[context.Context, shardTask, func(int, []byte), error](&analyzeFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func([]byte), error](&mergeFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, error](&writeFn{})
	register.Emitter2[int, []byte]()
	register.Emitter1[[]byte]()
	register.Iter1[[]byte]()
	beam.RegisterType(reflect.TypeFor[fileTask]())
	beam.RegisterType(reflect.TypeFor[shardTask]())
}

// fileTask is one universe file to count.
type fileTask struct {
	File int
	Path string
}

// shardTask is one universe file against one group of sessions.
type shardTask struct {
	Group int
	File  int
	Path  string
}

// shardPayload is a shard's result, carried between stages as JSON: the
// reports hold only exported fields, so nothing is lost on the way.
type shardPayload struct {
	File    int              `json:"file"`
	Reports []*attack.Report `json:"reports"` // nil: the file holds no candidate
	// Appended counts the hash lines appended for the listings of the
	// file's marked key lines (see analyzeShard); Undo are their counts
	// and Delisted the listed addresses they match, per session.
	Appended int           `json:"appended,omitempty"`
	Undo     []shardCounts `json:"undo,omitempty"`
	Delisted [][]string    `json:"delisted,omitempty"`
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

	var fileTasks []fileTask
	var shardTasks []shardTask
	for i, f := range files {
		fileTasks = append(fileTasks, fileTask{File: i, Path: f})
		for g := 0; g < plan.Groups; g++ {
			shardTasks = append(shardTasks, shardTask{Group: g, File: i, Path: f})
		}
	}
	s = s.Scope("spvfilter-privacy-analyze")
	// Reshuffle spreads the tasks, created in one bundle, over the workers.
	counts := beam.ParDo(s, &countFn{PairTest: cfg.PairTest}, beam.Reshuffle(s, beam.CreateList(s, fileTasks)))
	shards := beam.ParDo(s, &analyzeFn{captureFn{Config: cfg}}, beam.Reshuffle(s, beam.CreateList(s, shardTasks)))
	merged := beam.ParDo(s, &mergeFn{captureFn{Config: cfg}}, beam.GroupByKey(s, shards), beam.SideInput{Input: counts})
	beam.ParDo0(s, &writeFn{captureFn{Config: cfg}}, beam.GroupByKey(s, beam.AddFixedKey(s, merged)), beam.SideInput{Input: counts})
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

// countFn counts a universe file's lines and candidates by class.
type countFn struct {
	PairTest bool
}

func (f *countFn) ProcessElement(ctx context.Context, t fileTask) ([]byte, error) {
	r, err := openRead(ctx, t.Path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fc, err := CountUniverse(r, t.File, t.Path, f.PairTest)
	if err != nil {
		return nil, err
	}
	return json.Marshal(fc)
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

// analyzeFn analyzes one universe file for one group of sessions with
// attack.AnalyzeGroups.
type analyzeFn struct{ captureFn }

func (f *analyzeFn) ProcessElement(ctx context.Context, t shardTask, emit func(int, []byte)) error {
	_, groups := groupFilters(f.sessions, f.Config.sessionsPerShard(), t.Group)
	if groups == nil {
		return fmt.Errorf("privacybeam: session group %d is empty", t.Group)
	}
	sp, err := analyzeShard(func() (io.ReadCloser, error) { return openRead(ctx, t.Path) }, t.File, groups, f.Config.analyzeOptions())
	if err != nil {
		return fmt.Errorf("universe %s: %w", t.Path, err)
	}
	payload, err := json.Marshal(sp)
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

// readCounts decodes the files' counts and adds them up.
func readCounts(counts func(*[]byte) bool) (*universeTotals, []*FileCount, error) {
	var all []*FileCount
	var b []byte
	for counts(&b) {
		fc := new(FileCount)
		if err := json.Unmarshal(b, fc); err != nil {
			return nil, nil, fmt.Errorf("privacybeam: file counts: %w", err)
		}
		all = append(all, fc)
	}
	tot, err := totalUniverse(all)
	return tot, all, err
}

// mergeFn merges the shards of one session group.
type mergeFn struct{ captureFn }

func (f *mergeFn) ProcessElement(ctx context.Context, group int, parts func(*[]byte) bool, counts func(*[]byte) bool, emit func([]byte)) error {
	tot, files, err := readCounts(counts)
	if err != nil {
		return err
	}
	_, groups := groupFilters(f.sessions, f.Config.sessionsPerShard(), group)
	var shards []shardReports
	var b []byte
	for parts(&b) {
		var sp shardPayload
		if err := json.Unmarshal(b, &sp); err != nil {
			return fmt.Errorf("privacybeam: group %d: %w", group, err)
		}
		if err := checkShard(&sp, files); err != nil {
			return err
		}
		shards = append(shards, shardReports{file: sp.File, reports: sp.Reports, undo: sp.Undo, delisted: sp.Delisted})
	}
	if len(shards) != len(files) {
		return fmt.Errorf("privacybeam: group %d: %d shards for %d universe files", group, len(shards), len(files))
	}
	reps, err := mergeGroup(groups, shards, tot, f.Config.analyzeOptions())
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

// checkShard refuses a shard whose reading of its file differs from the
// count of it: the merge would then be wrong.
func checkShard(sp *shardPayload, files []*FileCount) error {
	if sp.File < 0 || sp.File >= len(files) {
		return fmt.Errorf("privacybeam: shard of universe file %d among %d", sp.File, len(files))
	}
	var fc *FileCount
	for _, c := range files {
		if c.File == sp.File {
			fc = c
		}
	}
	if len(sp.Reports) == 0 {
		if fc.CandidatesTested != 0 {
			return fmt.Errorf("privacybeam: %s: no report for a file of %d candidates", fc.Path, fc.CandidatesTested)
		}
		return nil
	}
	u := sp.Reports[0].Universe
	if u == nil {
		return fmt.Errorf("privacybeam: %s: a report without its universe", fc.Path)
	}
	if sp.Appended > 0 && (len(sp.Undo) != len(sp.Reports) || len(sp.Delisted) != len(sp.Reports)) {
		return fmt.Errorf("privacybeam: %s: %d reports, %d of listed addresses", fc.Path, len(sp.Reports), len(sp.Undo))
	}
	// The appended hash lines, after a newline that may be a blank line.
	lines := u.LinesRead - uint64(sp.Appended)
	if sp.Appended > 0 && lines == fc.LinesRead+1 {
		lines--
	}
	if lines != fc.LinesRead || u.LinesSkipped != fc.LinesSkipped || u.CandidatesTested-uint64(sp.Appended) != fc.CandidatesTested {
		return fmt.Errorf("privacybeam: %s: the analysis read %+v, the count %d lines, %d skipped, %d candidates",
			fc.Path, u, fc.LinesRead, fc.LinesSkipped, fc.CandidatesTested)
	}
	return nil
}

// writeFn puts the groups' reports together and writes the report.
type writeFn struct{ captureFn }

func (f *writeFn) ProcessElement(ctx context.Context, _ int, groups func(*[]byte) bool, counts func(*[]byte) bool) error {
	tot, _, err := readCounts(counts)
	if err != nil {
		return err
	}
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
		for i, r := range gp.Reports {
			r.Universe = tot.scan
			reports[gp.Group*per+i] = r
		}
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
