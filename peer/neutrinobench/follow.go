package neutrinobench

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btclog"
	"github.com/lightninglabs/neutrino"
	"github.com/lightninglabs/neutrino/headerfs"
	spv "github.com/spvfilter/spvfilter/peer/client"
)

// The followers of the follow benchmark (see the package documentation):
// each watches the same scripts from the same block on, and a recorder
// keeps what it reports and when.

// followRequest asks a process to run one follower.
type followRequest struct {
	// Follower names the follower: "spvfilter" or "neutrino".
	Follower string
	// Addrs are the nodes' addresses.
	Addrs []string
	// Watched is the number of watched scripts (followScripts).
	Watched int
	// Start is the height of the tip when the follower starts, the first
	// block it reports; Final is the last.
	Start, Final int32
	// Out is the file the report is written to, as JSON.
	Out string
	// Limit bounds the whole run.
	Limit time.Duration
	// ProfileDir, if set, receives diagnostics named after Tag: a CPU
	// profile and a heap profile of the follow (after Start), the
	// follower's log and its report.
	ProfileDir string
	Tag        string
}

// reportedBlock is a block a follower reported connected, and when.
type reportedBlock struct {
	Height int32
	Hash   chainhash.Hash
	At     time.Time
}

// reportedMatch is a transaction a follower reported.
type reportedMatch struct {
	Txid   chainhash.Hash
	Height int32
}

// followReport is what a follower reported and what following cost it,
// from the moment it had reported the block at Start (ready) to the
// moment it reported the block at Final (done).
type followReport struct {
	Follower string
	// Err is why the follower stopped before Final, if it did.
	Err string
	// Blocks are the blocks reported connected, in the order they were;
	// Matches the transactions; Disconnected the heights of blocks
	// reported disconnected.
	Blocks       []reportedBlock
	Matches      []reportedMatch
	Disconnected []int32
	// Ready and Done are when the follower reported Start and Final.
	Ready, Done time.Time
	// Cost is what the process spent between Ready and Done (Wall, CPU,
	// PeakHeap; PeakRSS is the growth over RSSAtReady).
	Cost       Cost
	RSSAtReady uint64
	// OwnReceived is the bytes the follower counted itself (spvfilter's
	// client, neutrino through its dialer), at the end and at Ready: the
	// nodes count only their live connections, so a connection closed
	// while following takes its bytes out of their count.
	OwnReceived, OwnReceivedAtReady uint64
	// ByCommand and ByCommandAtReady are the follower's own count by
	// message command (see msgCounter), at the end and at Ready.
	ByCommand, ByCommandAtReady map[string]uint64
	// Notes are the follower's warnings and the state of its peers at
	// the end.
	Notes []string
}

// recorder keeps what a follower reports; its methods are called from
// the follower's goroutines.
type recorder struct {
	start, final int32

	mu    sync.Mutex
	rep   followReport
	ready chan struct{} // closed when Start is reported
	done  chan struct{} // closed when Final is reported
}

func newRecorder(req followRequest) *recorder {
	return &recorder{start: req.Start, final: req.Final, rep: followReport{Follower: req.Follower},
		ready: make(chan struct{}), done: make(chan struct{})}
}

// connected records a block up to Final: blocks mined after the round
// (see awaitDone in the tests) are not part of it.
func (r *recorder) connected(height int32, hash chainhash.Hash) {
	if height > r.final {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Blocks = append(r.rep.Blocks, reportedBlock{Height: height, Hash: hash, At: now})
	switch {
	case height == r.start && r.rep.Ready.IsZero():
		r.rep.Ready = now
		close(r.ready)
	case height == r.final && r.rep.Done.IsZero():
		r.rep.Done = now
		close(r.done)
	}
}

// matched records a transaction of the blocks above Start up to Final:
// the block at Start marks where the follow begins and belongs to what
// was mined before.
func (r *recorder) matched(txid chainhash.Hash, height int32) {
	if height <= r.start || height > r.final {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Matches = append(r.rep.Matches, reportedMatch{Txid: txid, Height: height})
}

func (r *recorder) disconnected(height int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Disconnected = append(r.rep.Disconnected, height)
}

// report returns a copy of what was recorded.
func (r *recorder) report() followReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	rep.Blocks = append([]reportedBlock(nil), r.rep.Blocks...)
	rep.Matches = append([]reportedMatch(nil), r.rep.Matches...)
	rep.Disconnected = append([]int32(nil), r.rep.Disconnected...)
	return rep
}

// following is a running follower.
type following struct {
	// errc receives the follower's error if it stops.
	errc <-chan error
	// notes returns the follower's warnings and peer states.
	notes func() []string
	// received returns the bytes the follower counted itself (zero when
	// it does not count them).
	received func() uint64
	// byCommand returns those bytes by the command of their message
	// (see msgCounter).
	byCommand func() map[string]uint64
	// stop ends the follower and releases what it holds.
	stop func()
}

// startFollowerFunc starts a follower that reports to rec.
type startFollowerFunc func(ctx context.Context, req followRequest, params *chaincfg.Params, rec *recorder) (*following, error)

// followers are the followers the benchmark compares, spvfilter first.
var followers = []struct {
	name  string
	start startFollowerFunc
}{{"spvfilter", followSpvfilter}, {"neutrino", followNeutrino}}

// followerNamed returns the follower called name.
func followerNamed(name string) (startFollowerFunc, error) {
	for _, f := range followers {
		if f.name == name {
			return f.start, nil
		}
	}
	return nil, fmt.Errorf("neutrinobench: no follower %q", name)
}

// followSpvfilter connects spvfilter's client to the nodes with a data
// directory of its own, starts its service and runs a following rescan of
// the watched scripts from Start.
func followSpvfilter(ctx context.Context, req followRequest, params *chaincfg.Params, rec *recorder) (_ *following, err error) {
	dir, err := os.MkdirTemp("", "neutrinobench-spvfilter-*")
	if err != nil {
		return nil, err
	}
	var logw io.WriteCloser
	// Every connection is counted by message too (spvfilter's own count,
	// BytesReceived, is the figure).
	msgs := newMsgCounter()
	cfg := spv.Config{Peers: req.Addrs, Params: params, DataDir: dir, Dialer: msgs.dial}
	if req.ProfileDir != "" {
		if logw, err = os.Create(profilePath(req, "log")); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cfg.Log = &stampWriter{w: logw}
	}
	release := func() {
		if logw != nil {
			logw.Close()
		}
		os.RemoveAll(dir)
	}
	c, err := spv.Connect(ctx, cfg)
	if err != nil {
		release()
		return nil, fmt.Errorf("spvfilter: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	if err := c.Start(ctx); err != nil {
		cancel()
		c.Close()
		release()
		return nil, fmt.Errorf("spvfilter: start: %w", err)
	}
	items := make([]spv.WatchItem, req.Watched)
	for i, s := range followScripts(req.Watched) {
		items[i] = spv.ScriptItem(s)
	}
	r := c.NewRescan(spv.RescanOptions{Watch: items, From: req.Start, Follow: true, OnEvent: func(e spv.Event) {
		switch e.Kind {
		case spv.EventMatch:
			rec.matched(e.Match.Txid, e.Height)
		case spv.EventConnected:
			rec.connected(e.Height, e.BlockHash)
		case spv.EventDisconnected:
			rec.disconnected(e.Height)
		}
	}})
	errc := make(chan error, 1)
	var ran sync.WaitGroup
	ran.Add(1)
	go func() {
		defer ran.Done()
		err := r.Run(ctx)
		if err == nil {
			err = ctx.Err()
		}
		errc <- fmt.Errorf("spvfilter rescan ended at height %d: %w", r.Height(), err)
	}()
	return &following{
		errc: errc,
		notes: func() []string {
			notes := r.Warnings()
			for _, p := range c.Peers() {
				if p.Banned || p.Reason != "" {
					notes = append(notes, fmt.Sprintf("peer %s: banned %v, %s", p.Address, p.Banned, p.Reason))
				}
			}
			return notes
		},
		received:  c.BytesReceived,
		byCommand: msgs.ByCommand,
		stop: func() {
			cancel()
			ran.Wait()
			c.Close()
			release()
		},
	}, nil
}

// followNeutrino starts neutrino's ChainService on the nodes and, once it
// has synced, a Rescan of the watched scripts' addresses from the block
// below Start with no end block: it reports the block at Start, then every
// block as the service learns it. Rescan watches the outputs it finds
// paying to the addresses, and so reports their spends.
func followNeutrino(ctx context.Context, req followRequest, params *chaincfg.Params, rec *recorder) (*following, error) {
	var addrs []btcutil.Address
	for _, script := range followScripts(req.Watched) {
		_, a, _, err := txscript.ExtractPkScriptAddrs(script, params)
		if err != nil || len(a) != 1 {
			return nil, fmt.Errorf("neutrino: watched script %x is not a single-address script", script)
		}
		addrs = append(addrs, a[0])
	}
	closeLog, err := neutrinoLog(req)
	if err != nil {
		return nil, err
	}
	s, err := startNeutrino(ctx, req.Addrs, params)
	if err != nil {
		closeLog()
		return nil, err
	}
	release := func() {
		s.release()
		closeLog()
	}
	hash, err := s.cs.GetBlockHash(int64(req.Start - 1))
	if err != nil {
		release()
		return nil, fmt.Errorf("neutrino: block hash at %d: %w", req.Start-1, err)
	}
	quit := make(chan struct{})
	rescan := neutrino.NewRescan(&neutrino.RescanChainSource{ChainService: s.cs},
		neutrino.StartBlock(&headerfs.BlockStamp{Height: req.Start - 1, Hash: *hash}),
		neutrino.WatchAddrs(addrs...), neutrino.QuitChan(quit),
		neutrino.NotificationHandlers(rpcclient.NotificationHandlers{
			OnFilteredBlockConnected: func(height int32, header *wire.BlockHeader, txs []*btcutil.Tx) {
				for _, tx := range txs {
					rec.matched(*tx.Hash(), height)
				}
				rec.connected(height, header.BlockHash())
			},
			OnFilteredBlockDisconnected: func(height int32, _ *wire.BlockHeader) {
				rec.disconnected(height)
			},
		}))
	errc := make(chan error, 1)
	rescanErr := rescan.Start()
	go func() {
		select {
		case err := <-rescanErr:
			errc <- fmt.Errorf("neutrino rescan ended: %w", err)
		case <-quit:
		}
	}()
	return &following{
		errc:      errc,
		notes:     func() []string { return nil },
		received:  s.received.Total,
		byCommand: s.received.ByCommand,
		stop: func() {
			close(quit)
			rescan.WaitForShutdown()
			release()
		},
	}, nil
}

// stampWriter writes each write as a line stamped with the time, as
// neutrino's log lines are.
type stampWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *stampWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.w, time.Now().Format("2006-01-02 15:04:05.000 ")); err != nil {
		return 0, err
	}
	return s.w.Write(b)
}

// neutrinoLog sends neutrino's log, at the debug level, to a file when
// req asks for diagnostics, and returns what closes it.
func neutrinoLog(req followRequest) (closeLog func(), err error) {
	if req.ProfileDir == "" {
		return func() {}, nil
	}
	f, err := os.Create(profilePath(req, "log"))
	if err != nil {
		return nil, err
	}
	l := btclog.NewBackend(f).Logger("NTRN")
	l.SetLevel(btclog.LevelDebug)
	neutrino.UseLogger(l)
	return func() {
		neutrino.DisableLog()
		f.Close()
	}, nil
}

// profilePath names a diagnostic file of the run req describes.
func profilePath(req followRequest, kind string) string {
	return fmt.Sprintf("%s/%s-%s.%s", req.ProfileDir, req.Tag, req.Follower, kind)
}
