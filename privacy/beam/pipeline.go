package privacybeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
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
	// Client keeps only the sessions of this client, a HOST, HOST:PORT or
	// session id, as "privacy analyze --client" does; "" keeps them all.
	Client string
	// PairTest and MaxMatches are those of attack.AnalyzeOptions.
	PairTest   bool
	MaxMatches int
	// Intersect also intersects the filters of all the kept sessions, as
	// one wallet's ("privacy analyze --intersect").
	Intersect bool
	// Link links the sessions that probably share a wallet and
	// intersects each group ("privacy analyze --link"); LinkThreshold is
	// attack.LinkOptions.Threshold (0: 0.5).
	Link          bool
	LinkThreshold float64
	// SessionsPerShard is the size of a session group (0:
	// DefaultSessionsPerShard).
	SessionsPerShard int
	// Workers is the parsing goroutines of each shard (0: privacy's
	// default).
	Workers int
}

// Plan is what a pipeline will do: the universe files and the groups of
// sessions, one shard for each pair. With Config.Intersect, the
// intersection of all the sessions is analyzed as one more session.
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

// Build adds the analysis to the pipeline of s. It reads the capture and
// lists the universe files while building, so that bad input is refused
// before anything runs; the workers read them again. How the work is
// sharded, merged and finished is in the package documentation.
func Build(ctx context.Context, s beam.Scope, cfg Config) (*Plan, error) {
	switch {
	case cfg.Capture == "" || cfg.Universe == "" || cfg.Output == "":
		return nil, fmt.Errorf("%w: a capture, a universe and an output are needed", ErrBadConfig)
	case cfg.SessionsPerShard < 0 || cfg.MaxMatches < 0 || cfg.Workers < 0 || cfg.Workers > universe.MaxWorkers:
		return nil, fmt.Errorf("%w: negative sessions per shard or matches, or workers not in 0..%d", ErrBadConfig, universe.MaxWorkers)
	case cfg.LinkThreshold != 0 && !(cfg.LinkThreshold >= 0.5 && cfg.LinkThreshold < 1):
		return nil, fmt.Errorf("%w: link threshold %v: want a probability in [0.5, 1)", ErrBadConfig, cfg.LinkThreshold)
	}
	if cfg.SessionsPerShard == 0 {
		cfg.SessionsPerShard = DefaultSessionsPerShard
	}
	j, err := loadJob(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	files, err := listFiles(ctx, cfg.Universe)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Files: files, Sessions: len(j.sessions), Groups: j.parts(cfg.SessionsPerShard)}

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

// job is what the steps analyze: the kept sessions of the capture, and the
// groups of filters an accumulator tests, one per session, then with
// Config.Intersect the filters of all of them.
type job struct {
	sessions []*capture.Session
	groups   [][]*bip37.Filter
}

// loadJob reads the capture and keeps the sessions cfg.Client names,
// refusing what "privacy analyze --capture" refuses.
func loadJob(ctx context.Context, cfg *Config) (*job, error) {
	data, err := readFile(ctx, cfg.Capture)
	if err != nil {
		return nil, fmt.Errorf("%w: capture: %w", ErrBadConfig, err)
	}
	records, err := capture.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, cfg.Capture, err)
	}
	sessions, err := capture.Sessions(records)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, cfg.Capture, err)
	}
	j := &job{sessions: selectSessions(sessions, cfg.Client)}
	switch {
	case len(j.sessions) == 0 && cfg.Client != "":
		return nil, fmt.Errorf("%w: %s: no filterload recorded from %s", ErrBadConfig, cfg.Capture, cfg.Client)
	case len(j.sessions) == 0:
		return nil, fmt.Errorf("%w: %s: no filterload recorded", ErrBadConfig, cfg.Capture)
	}
	var all []*bip37.Filter
	for _, s := range j.sessions {
		fs := s.BloomFilters()
		if len(fs) > attack.MaxFilters {
			return nil, fmt.Errorf("%w: session %s (%s) loaded %d filters, at most %d are analyzed together",
				ErrBadConfig, s.ID, s.Client, len(fs), attack.MaxFilters)
		}
		j.groups = append(j.groups, fs)
		all = append(all, fs...)
	}
	if cfg.Intersect {
		if len(all) > attack.MaxFilters {
			return nil, fmt.Errorf("%w: intersect: the %d sessions loaded %d filters, at most %d can be intersected",
				ErrBadConfig, len(j.sessions), len(all), attack.MaxFilters)
		}
		j.groups = append(j.groups, all)
	}
	return j, nil
}

// selectSessions keeps the sessions of client, a HOST, HOST:PORT or
// session id ("" keeps them all), as "privacy analyze --client" does.
func selectSessions(sessions []*capture.Session, client string) []*capture.Session {
	if client == "" {
		return sessions
	}
	var kept []*capture.Session
	for _, s := range sessions {
		host, _, err := net.SplitHostPort(s.Client)
		if err == nil && host == client || s.Client == client || s.ID == client {
			kept = append(kept, s)
		}
	}
	return kept
}

// parts is the number of session groups of at most per groups of filters.
func (j *job) parts(per int) int { return (len(j.groups) + per - 1) / per }

// part returns the groups of filters of session group g (nil for none).
func (j *job) part(per, g int) [][]*bip37.Filter {
	lo, hi := g*per, min((g+1)*per, len(j.groups))
	if lo < 0 || lo >= hi {
		return nil
	}
	return j.groups[lo:hi]
}
