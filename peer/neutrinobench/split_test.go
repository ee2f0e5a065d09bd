package neutrinobench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// splitRange returns the heights conn of conns reads when blocks 1..tip's
// filters are split in contiguous runs of whole getcfilters requests
// (wire.MaxGetCFiltersReqRange blocks each), as evenly as the requests
// allow; from > to when the connection has none.
func splitRange(tip, conns, conn int) (from, to int) {
	reqs := (tip + wire.MaxGetCFiltersReqRange - 1) / wire.MaxGetCFiltersReqRange
	lo, hi := conn*reqs/conns, (conn+1)*reqs/conns
	return 1 + lo*wire.MaxGetCFiltersReqRange, min(tip, hi*wire.MaxGetCFiltersReqRange)
}

// readSplit reads blocks 1..len(hashes)-1's filters from addr over conns
// raw connections at once (rawConn), each its splitRange in requests of
// perRequest getcfilters, one at a time (perRequest 0: all written at
// once). The handshakes are not timed: the wall time runs from the
// connections' first requests to the last pong read.
func readSplit(ctx context.Context, addr string, params *chaincfg.Params, hashes []chainhash.Hash, conns, perRequest int) (time.Duration, error) {
	rcs := make([]*rawConn, conns)
	defer func() {
		for _, rc := range rcs {
			if rc != nil {
				rc.conn.Close()
			}
		}
	}()
	for i := range rcs {
		rc, err := dialRaw(ctx, addr, params)
		if err != nil {
			return 0, fmt.Errorf("connection %d: %w", i, err)
		}
		rcs[i] = rc
	}
	errs := make([]error, conns)
	var wg sync.WaitGroup
	begin := time.Now()
	for i, rc := range rcs {
		from, to := splitRange(len(hashes)-1, conns, i)
		if from > to {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := rc.readRange(hashes, from, to, perRequest, 1); err != nil {
				errs[i] = fmt.Errorf("connection %d, blocks %d..%d: %w", i, from, to, err)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	for _, err := range errs {
		if err != nil {
			return wall, err
		}
	}
	return wall, nil
}

// TestSplitRange checks that the connections' ranges cover 1..tip once,
// in order, whole requests each but the last.
func TestSplitRange(t *testing.T) {
	for _, tc := range []struct{ tip, conns int }{{20000, 1}, {20000, 2}, {20000, 3}, {2000, 3}, {2500, 2}, {999, 2}, {20001, 3}} {
		next := 1
		for i := 0; i < tc.conns; i++ {
			from, to := splitRange(tc.tip, tc.conns, i)
			if from > to {
				continue
			}
			if from != next {
				t.Fatalf("tip %d over %d: connection %d starts at %d, want %d", tc.tip, tc.conns, i, from, next)
			}
			if (from-1)%wire.MaxGetCFiltersReqRange != 0 || (to != tc.tip && to%wire.MaxGetCFiltersReqRange != 0) {
				t.Fatalf("tip %d over %d: connection %d reads %d..%d, not whole requests", tc.tip, tc.conns, i, from, to)
			}
			next = to + 1
		}
		if next != tc.tip+1 {
			t.Fatalf("tip %d over %d: ranges end at %d", tc.tip, tc.conns, next-1)
		}
	}
}

// TestSplitServe measures whether one node serves every filter of the
// chain faster over several connections than over one: btcd answers
// each peer in goroutines of its own, so on more than one core its
// lookups and writes for two peers may overlap. Each round reads blocks
// 1..tip's filters from the first node (SPVFILTER_BENCH_NODES, or a node
// it starts) over 1, 2 and 3 raw connections at once (readSplit: each a
// contiguous run of whole getcfilters requests), every request written
// at once and in spvfilter's request model (two getcfilters and a ping,
// the next when the pong came), in an order that rotates from round to
// round. It prints each read's wall time, the node's CPU time and the
// reading process's (the two together, over the cores, bound the wall
// time any number of connections can reach), then each way's median and
// its median ratio, round by round, to one connection read the same way.
// It runs only when SPVFILTER_BENCH_SPLIT is set to the number of rounds;
// SPVFILTER_BENCH_SPLIT_WAYS (a regular expression over the ways' names)
// narrows it:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_SPLIT=9 go test -run TestSplitServe -v
func TestSplitServe(t *testing.T) {
	rounds, err := strconv.Atoi(os.Getenv("SPVFILTER_BENCH_SPLIT"))
	if err != nil || rounds < 1 {
		t.Skip("measurement: set SPVFILTER_BENCH_SPLIT to the number of rounds to run it")
	}
	c, nodes, pids := benchNodes(t)
	addr, params := nodes[0].P2PAddr, nodes[0].Params
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	hashes := servedHashes(ctx, t, c, addr, params)
	type way struct {
		name              string
		conns, perRequest int
		base              string // the one-connection way it is compared with
	}
	var ways []way
	for _, model := range []struct {
		name       string
		perRequest int
	}{{"pipelined", 0}, {"2 a request", 2}} {
		for conns := 1; conns <= 3; conns++ {
			ways = append(ways, way{fmt.Sprintf("%d conn, %s", conns, model.name), conns, model.perRequest,
				fmt.Sprintf("1 conn, %s", model.name)})
		}
	}
	ways = pickWays(t, "SPVFILTER_BENCH_SPLIT_WAYS", ways, func(w way) string { return w.name })
	run := func(w way) (wall time.Duration, cost Cost, err error) {
		m := startMeter(pids[:min(1, len(pids))])
		wall, err = readSplit(ctx, addr, params, hashes, w.conns, w.perRequest)
		return wall, m.stop(), err
	}
	for _, w := range ways { // a warm-up of each, neither timed nor printed
		if _, _, err := run(w); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
	}
	walls := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		order := slices.Clone(ways)
		for i := 0; i < r%len(ways); i++ {
			order = append(order[1:], order[0])
		}
		fmt.Printf("round %d (load %s)\n", r+1, loadAverage())
		for _, w := range order {
			wall, cost, err := run(w)
			if err != nil {
				t.Fatalf("round %d, %s: %v", r+1, w.name, err)
			}
			fmt.Printf("  %s: %.3f s, node cpu %.2f s, reader cpu %.2f s\n", w.name, wall.Seconds(), cost.NodeCPU.Seconds(), cost.CPU.Seconds())
			walls[w.name] = append(walls[w.name], wall.Seconds())
		}
	}
	fmt.Printf("medians of %d rounds (ratio: one connection's wall over the way's in the same round, median):\n", rounds)
	for _, w := range ways {
		line := fmt.Sprintf("  %s: wall %.3f s", w.name, medianOf(walls[w.name]))
		if b := walls[w.base]; w.base != w.name && len(b) == rounds {
			r := make([]float64, rounds)
			for i := range r {
				r[i] = b[i] / walls[w.name][i]
			}
			line += fmt.Sprintf(", %.2fx faster than %s", medianOf(r), w.base)
		}
		fmt.Println(line)
	}
}
