package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// maxAttempts bounds the restarts of a scan after a reorganization or a
// failed peer.
const maxAttempts = 8

// scan runs pass until it succeeds, checking for a reorganization after
// every failure before blaming the peer, as ScanBIP157 describes.
func (c *Client) scan(ctx context.Context, req ScanRequest, mode string, service wire.ServiceFlag,
	pass func(context.Context, *scanLog, ScanRequest) (*ScanResult, error)) (*ScanResult, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	s := &scanRun{c: c, startBytes: c.pool.BytesReceived(), log: newScanLog(), want: req, mode: mode, service: service, pass: pass}
	// With the service running, the chain and the peers' tips are kept
	// current by it, and a reorganization during the scan is seen by the
	// next operation (a rescan reports it): the scan does not sync the
	// headers itself, but after a failure.
	s.withService = c.started()
	for ; ; s.attempt++ {
		res, again, err := s.try(ctx)
		if !again {
			return res, err
		}
	}
}

// scanRun is the state of one scan over its attempts: what was asked,
// the pass that scans, and how many attempts came before.
type scanRun struct {
	c       *Client
	log     *scanLog
	want    ScanRequest // as asked: its range is resolved anew each attempt
	mode    string
	service wire.ServiceFlag
	pass    func(context.Context, *scanLog, ScanRequest) (*ScanResult, error)
	// withService is whether the client's service keeps the chain
	// current; startBytes what the pool had received before the scan.
	withService bool
	startBytes  uint64
	attempt     int
}

// try makes one attempt: it syncs the headers unless the service keeps
// them current, resolves the range and runs the pass. It returns the
// result, or again when the scan must start over (a reorganization, a
// header to verify again, a peer blamed and others left), or the error
// that ends the scan.
func (s *scanRun) try(ctx context.Context) (res *ScanResult, again bool, err error) {
	if !s.withService || s.attempt > 0 {
		if _, err := s.c.syncHeaders(ctx, s.log); err != nil {
			return nil, false, err
		}
	}
	req, err := s.c.scanRange(s.log, s.want, s.service)
	if err != nil {
		return nil, false, err
	}
	res, err = s.pass(ctx, s.log, req)
	if err != nil {
		again, err = s.failed(ctx, req, err)
		return nil, again, err
	}
	// Blocks scanned may have left the chain meanwhile: a node still
	// serves a block it disconnected.
	if !s.withService {
		up, err := s.c.syncHeaders(ctx, s.log)
		if err != nil {
			return nil, false, err
		}
		if up.Reorganized() && up.Fork < req.To && s.attempt < maxAttempts {
			s.c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
			return nil, true, nil
		}
	}
	if err := s.complete(ctx, req, res); err != nil {
		return nil, false, err
	}
	return res, false, nil
}

// complete fills in a pass's result of req: the headers of the blocks
// scanned, the leak report of a BIP 157 scan that asked for one, the
// bytes received and what every result says (finish).
func (s *scanRun) complete(ctx context.Context, req ScanRequest, res *ScanResult) error {
	var err error
	// The headers of the blocks scanned, as the chain held them: it may
	// change as soon as the scan returns.
	if req.withHeaders {
		if res.headers, err = s.c.chain.Headers(req.From, req.To); err != nil {
			return fmt.Errorf("client: the chain state: %w", err)
		}
	}
	if req.Leak && s.mode == "bip157" {
		if res.Leak, err = s.c.leakOf(ctx, s.log, req.Watch, res.Cover != nil && res.Cover.Met); err != nil {
			s.log.note(fmt.Sprintf("%v: %v", errNoLeak, err))
		}
	}
	res.BytesReceived = s.c.pool.BytesReceived() - s.startBytes
	s.c.finish(res, s.log, s.mode)
	return nil
}

// failed handles a pass of req that failed with err: it reports again
// when the scan should start over (the top of an open range was lost
// with its peers, a disputed header is to be verified again, or the
// chain reorganized, which explains an honest node's failure), and
// otherwise blames the failed peer, ending the scan with its error when
// the attempts ran out or no peer offering the service is left.
func (s *scanRun) failed(ctx context.Context, req ScanRequest, err error) (again bool, _ error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if s.want.To < 0 && errors.Is(err, ErrNoPeers) && s.c.bestHeld(s.service) < req.To && s.attempt < maxAttempts {
		// The peers that held the top of the range were banned or
		// dropped: scan up to what those left hold.
		return true, nil
	}
	var f *pool.Failure
	if !errors.As(err, &f) {
		return false, err
	}
	if serr := s.c.chain.Err(); serr != nil {
		return false, fmt.Errorf("client: the chain state: %w", serr)
	}
	if errors.Is(f.Err, errDisputedHeader) && s.attempt < maxAttempts {
		// No proof yet: the header is verified again, with f.Member
		// (see ownWord).
		s.c.logf("%v: verifying again", f.Err)
		return true, nil
	}
	// A reorganization explains stalls, notfound and changed filter
	// headers from an honest node: check before blaming, on a new
	// connection if the failed request dropped the old one, unless the
	// node's own ends put its next dial far off (see pool.Pool.RedialDue):
	// the check then goes on without it rather than wait for it.
	if !isLie(f.Err) {
		if err := s.c.pool.RedialDue(ctx, f.Member); err != nil {
			s.c.logf("redialing %s: %v", f.Member.Addr(), err)
		}
	}
	up, serr := s.c.syncHeaders(ctx, s.log)
	if serr == nil && up.Reorganized() && up.Fork < req.To && s.attempt < maxAttempts {
		s.c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
		return true, nil
	}
	s.c.blame(f.Member, f.Err)
	if s.attempt >= maxAttempts || len(s.c.pool.Serving(s.service)) == 0 {
		return false, judged(err, f)
	}
	return true, nil
}

// scanRange resolves req's range on the chain as it is now: a negative To
// becomes the highest height a live peer offering service holds, and an
// explicit To must be held by one.
func (c *Client) scanRange(log *scanLog, req ScanRequest, service wire.ServiceFlag) (ScanRequest, error) {
	if len(c.pool.Serving(service)) == 0 {
		return req, fmt.Errorf("client: %w: no peer offers %s", ErrNoPeers, serviceName(service))
	}
	best := c.bestHeld(service)
	if req.To < 0 {
		req.To = best
		if best < c.chain.Height() {
			log.note(fmt.Sprintf("the chain's tip %d is held by no connected peer (it came from the data directory or a peer no longer used): scanned to %d",
				c.chain.Height(), best))
		}
	}
	if err := c.chain.CheckRange(req.From, req.To); err != nil {
		return req, fmt.Errorf("client: %w", err)
	}
	if req.To > best {
		return req, fmt.Errorf("client: %w: no connected peer holds the chain up to height %d (the highest one holds %d)", ErrNoPeers, req.To, best)
	}
	return req, nil
}

// serviceName names the service a scan needs.
func serviceName(service wire.ServiceFlag) string {
	switch service {
	case wire.SFNodeCF:
		return "compact filters (NODE_COMPACT_FILTERS)"
	case wire.SFNodeBloom:
		return "BIP 37 filtering (NODE_BLOOM)"
	}
	return service.String()
}

// finish fills in what every scan result says about its peers and the
// chain. Called with opMu held.
func (c *Client) finish(res *ScanResult, log *scanLog, mode string) {
	c.takeStoreNotes()
	if c.st != nil {
		if err := c.ledger.save(c.st.Dir(), c.cfg.Params.Name, false); err != nil {
			log.note(err.Error())
		}
	}
	res.Warnings = append(res.Warnings, c.notes...)
	res.Warnings = append(res.Warnings, log.notes...)
	res.Disconnected = append([]chainhash.Hash{}, c.disconnected...)
	res.Warnings = append(res.Warnings, c.forks...)
	res.Warnings = append(res.Warnings, c.pool.TakeNotes()...)
	c.disconnected, c.forks = nil, nil
	c.views.setCompared(log.compared)
	res.Peers = c.peerStatus(func(m *pool.Member) bool { return log.compared[m] })
	compared := 0
	for _, st := range res.Peers {
		if st.Compared {
			compared++
		}
	}
	// BIP 37 filters at one peer however many there are; its pass says
	// which.
	if mode != "bip37" {
		// Heights only one of several peers held are named; a single
		// peer's whole result rests on it.
		// (within the range: a verification may have compared heights
		// below it again).
		for _, o := range log.oneVoice {
			o.From, o.To = max(o.From, res.From), min(o.To, res.To)
			if o.From <= o.To {
				res.OnePeer = append(res.OnePeer, o)
				res.Warnings = append(res.Warnings, o.String())
			}
		}
		if compared <= 1 && len(res.OnePeer) == 0 {
			// Named when one peer is in use: a liar's result says whose.
			one := ""
			if addr := lonePeer(res.Peers); addr != "" {
				one = ", " + addr
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"the %s result rests on one peer%s: nothing it said was cross-checked with another peer (give several peers)", mode, one))
		}
	}
	for _, st := range res.Peers {
		switch {
		case st.Banned:
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s was banned: %s", st.Address, st.Reason))
		case st.Reason != "" && st.Reason != "connecting":
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s was not used: %s", st.Address, st.Reason))
		case st.Branch != nil:
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s is on another branch: it leaves the chain after height %d for its own tip %v at height %d",
				st.Address, st.Branch.Fork, st.Branch.Hash, st.Branch.Height))
		}
	}
}

// lonePeer is the address of the one peer of peers a result can rest on
// (not banned, used, on the client's chain), or "" if not exactly one.
func lonePeer(peers []PeerStatus) string {
	inUse := slices.DeleteFunc(slices.Clone(peers), func(st PeerStatus) bool { return st.Banned || st.Reason != "" || st.Branch != nil })
	if len(inUse) != 1 {
		return ""
	}
	return inUse[0].Address
}
