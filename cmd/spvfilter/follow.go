package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/peer/client"
)

// defaultDataDir is where scans keep the chain state of a network by
// default: a directory under the user cache directory for the public
// networks, none for regtest and simnet, whose chains are disposable and
// differ from node to node.
func defaultDataDir(params *chaincfg.Params) string {
	switch params.Name {
	case "regtest", "simnet":
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "spvfilter")
}

// followEvent is one line of scan --follow.
type followEvent struct {
	Event     string `json:"event"`
	Height    int32  `json:"height"`
	BlockHash string `json:"block_hash"`
	// The fields of a match, as in scan's matches.
	Txid          string   `json:"txid,omitempty"`
	Watch         []string `json:"watch,omitempty"`
	FalsePositive *bool    `json:"false_positive,omitempty"`
	// OnePeer names the peer a connected block's filter rests on when no
	// other peer's chain reached it.
	OnePeer string `json:"one_peer,omitempty"`
}

// followSummary is the last line of scan --follow.
type followSummary struct {
	Event    string         `json:"event"`
	Next     int32          `json:"next_height"`
	Matches  int            `json:"matched_count"` // on the chain at the end
	Peers    []scanPeerJSON `json:"peers"`
	Warnings []string       `json:"warnings"`
}

// follow runs a following rescan of plan's watch items from height
// from, printing every event as a JSON line, until ctx ends (an
// interrupt), then a summary line, whose warnings name the nodes and the
// data directory by their flags. Without --json the summary's warnings
// are also text lines on standard error; with --json they are in the
// summary alone.
func (a *app) follow(ctx context.Context, c *client.Client, plan *scanPlan, from int32) error {
	items, warnings, nodes := plan.items, plan.warnings, plan.nodes
	watch := plan.watch()
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	found := 0
	inBlock := map[chainhash.Hash]int{} // matches reported in each block
	var writeErr error
	r := c.NewRescan(client.RescanOptions{Watch: watch, From: from, Follow: true, OnEvent: func(e client.Event) {
		ev := followEvent{Event: e.Kind.String(), Height: e.Height, BlockHash: e.BlockHash.String(), OnePeer: e.OnePeer}
		if m := e.Match; m != nil {
			fp := m.FalsePositive
			ev.Txid, ev.FalsePositive, ev.Watch = m.Txid.String(), &fp, []string{}
			for _, i := range m.WatchItems {
				ev.Watch = append(ev.Watch, items[i].given)
			}
			found++
			inBlock[e.BlockHash]++
		}
		if e.Kind == client.EventDisconnected {
			// What matched in a block that left the chain no longer holds.
			found -= inBlock[e.BlockHash]
			delete(inBlock, e.BlockHash)
		}
		if err := enc.Encode(ev); err != nil && writeErr == nil {
			writeErr = err
		}
	}})
	// The service learns new blocks from the peers' announcements and
	// redials the peers that go away.
	if err := c.Start(ctx); err != nil {
		return err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		a.watchPeers(watchCtx, c, plan.nodes, peersGoneAfter)
	}()
	runErr := r.Run(ctx)
	stopWatch()
	<-watched // nothing more written beside the summary
	params := c.Chain().Params()
	warnings = append(warnings, nodes.namedAll(byFlag(r.Warnings(), items, params, plan.client.DataDir))...)
	var we *client.WaitError
	if ctx.Err() != nil && errors.As(runErr, &we) {
		// Ended by the signal while it waited for a peer: the end the
		// help promises (exit 0, the summary), the wait in its warnings.
		// The peers as the wait found them, in the tool's words (the
		// client's we.Peers holds the raw dial errors).
		warnings = append(warnings, nodes.named(fmt.Sprintf("interrupted while waiting %v, from height %d, for %s: %s",
			we.Waited.Round(time.Millisecond), we.Height, we.For, unusedPeers(c.Peers(), params))))
		runErr = nil
	}
	sum := followSummary{Event: "summary", Next: r.Height(), Matches: found, Peers: peersJSON(c.Peers(), params),
		Warnings: orEmpty(warnings)}
	a.warnBesideResult(sum.Warnings)
	if err := enc.Encode(sum); err != nil && writeErr == nil {
		writeErr = err
	}
	if runErr != nil {
		return runErr
	}
	return writeErr
}

// peersGoneAfter is how long scan --follow goes with no peer in use
// before it says so on standard error (with --json, as a JSON line
// {"warning": ...}).
const peersGoneAfter = 10 * time.Second

// watchPeers says on standard error, once each time it happens, that no
// peer has been in use for gone while following, naming each peer and
// why it is not in use (before, a follow whose peers had all gone away
// waited without a word, as if no block came), and says when a peer is
// in use again. The client redials the peers meanwhile. It looks once a
// second and returns when ctx ends. With --json standard error holds
// JSON alone: the warning is a line {"warning": ...}, as warnAlone
// writes it, and the peer's return a line {"log": ...}, as a library's
// log lines are.
func (a *app) watchPeers(ctx context.Context, c *client.Client, nodes nodeFlags, gone time.Duration) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	log := a.logWriter()
	lastInUse, said := time.Now(), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		peers := c.Peers()
		inUse := slices.ContainsFunc(peers, func(p client.PeerStatus) bool { return p.Reason == "" && !p.Banned })
		switch {
		case inUse && said:
			fmt.Fprintf(log, "a peer is in use again after %v: following goes on\n", time.Since(lastInUse).Round(time.Second))
			lastInUse, said = time.Now(), false
		case inUse:
			lastInUse = time.Now()
		case !said && time.Since(lastInUse) >= gone:
			a.warnAlone([]string{nodes.named(fmt.Sprintf("no peer in use for %v (%s): following waits for one, redialling them, and says when one is back; Ctrl-C ends it, and %s",
				gone, unusedPeers(peers, c.Chain().Params()), nodes.moreNodes()))})
			said = true
		}
	}
}

// unusedPeers names each peer and why it is not in use, in the tool's
// words (statusWords: "connection refused: nothing listens there", not
// the dial's error), or the height it holds, or says that none is known.
func unusedPeers(peers []client.PeerStatus, params *chaincfg.Params) string {
	var why []string
	for _, p := range peers {
		switch {
		case p.Banned:
			why = append(why, fmt.Sprintf("%s: banned: %s", p.Address, statusWords(p, params)))
		case p.Reason != "":
			why = append(why, p.Address+": "+statusWords(p, params))
		default:
			why = append(why, fmt.Sprintf("%s: in use, holds up to height %d", p.Address, p.Tip))
		}
	}
	if len(why) == 0 {
		return "none known"
	}
	return strings.Join(why, "; ")
}

// moreNodes says how to give a follow other nodes, by the flag its nodes
// came from: another --connect where they were given with it (used
// alone), else --peer (used beside the DNS seeds' peers).
func (nf nodeFlags) moreNodes() string {
	for _, flag := range nf {
		if flag == "--connect" {
			return "to follow with other nodes, run it again with one more --connect HOST:PORT each (repeatable)"
		}
	}
	return "to follow with more nodes, run it again with --peer HOST:PORT for each (repeatable)"
}
