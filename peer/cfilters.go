package peer

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// GetCFCheckpt asks for the basic filter headers at every multiple of
// 1,000 up to the block stop (getcfcheckpt), of which there must be
// want: stop's height divided by 1,000.
func (p *Peer) GetCFCheckpt(ctx context.Context, stop chainhash.Hash, want int) ([]chainhash.Hash, error) {
	const op = "getcfcheckpt"
	end, err := p.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := p.needCF(op); err != nil {
		return nil, err
	}
	deadline := p.deadline()
	if err := p.send(ctx, op, wire.NewMsgGetCFCheckpt(wire.GCSFilterRegular, &stop), deadline); err != nil {
		return nil, err
	}
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return nil, err
	}
	m, err := p.recvBarred(ctx, op, deadline, is[*wire.MsgCFCheckpt], nonce)
	if err != nil {
		return nil, err
	}
	cp := m.(*wire.MsgCFCheckpt)
	if cp.FilterType != wire.GCSFilterRegular || cp.StopHash != stop {
		return nil, p.fail(op, "%w: checkpoints for filter type %d up to %v, asked for type 0 up to %v",
			ErrBadFilterHeader, cp.FilterType, cp.StopHash, stop)
	}
	if len(cp.FilterHeaders) != want {
		return nil, p.fail(op, "%w: %d checkpoints up to block %v, expected %d", ErrBadFilterHeader, len(cp.FilterHeaders), stop, want)
	}
	out := make([]chainhash.Hash, len(cp.FilterHeaders))
	for i, h := range cp.FilterHeaders {
		out[i] = *h
	}
	return out, nil
}

// GetCFHeaders asks for the basic filter hashes of the blocks from height
// start up to the block stop (getcfheaders), of which there must be want,
// and returns the filter header before start with them.
func (p *Peer) GetCFHeaders(ctx context.Context, start int32, stop chainhash.Hash, want int) (prev chainhash.Hash, hashes []chainhash.Hash, err error) {
	const op = "getcfheaders"
	end, err := p.begin(ctx, op)
	if err != nil {
		return prev, nil, err
	}
	defer end()
	if err := p.needCF(op); err != nil {
		return prev, nil, err
	}
	if want < 1 || want > wire.MaxCFHeadersPerMsg {
		return prev, nil, p.errorf(op, "peer: %d filter headers asked for, at most %d per request", want, wire.MaxCFHeadersPerMsg)
	}
	deadline := p.deadline()
	if err := p.send(ctx, op, wire.NewMsgGetCFHeaders(wire.GCSFilterRegular, uint32(start), &stop), deadline); err != nil {
		return prev, nil, err
	}
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return prev, nil, err
	}
	m, err := p.recvBarred(ctx, op, deadline, is[*wire.MsgCFHeaders], nonce)
	if err != nil {
		return prev, nil, err
	}
	msg := m.(*wire.MsgCFHeaders)
	if msg.FilterType != wire.GCSFilterRegular || msg.StopHash != stop {
		return prev, nil, p.fail(op, "%w: headers for filter type %d up to %v, asked for type 0 up to %v",
			ErrBadFilterHeader, msg.FilterType, msg.StopHash, stop)
	}
	if len(msg.FilterHashes) != want {
		return prev, nil, p.fail(op, "%w: %d filter hashes from height %d up to block %v, expected %d",
			ErrBadFilterHeader, len(msg.FilterHashes), start, stop, want)
	}
	hashes = make([]chainhash.Hash, len(msg.FilterHashes))
	for i, h := range msg.FilterHashes {
		hashes[i] = *h
	}
	return msg.PrevFilterHeader, hashes, nil
}

// MaxCFiltersPerRequest bounds the filters of one GetCFilters: it sends
// a getcfilters message for every 1,000 of them (the most one may ask
// for) at once, so that the node looks up the filters of the next while
// it sends those of the one before, rather than waiting for the next
// request (a node serves a peer's requests one at a time). The answer is
// given the timeout once for each message.
const MaxCFiltersPerRequest = 2 * wire.MaxGetCFiltersReqRange

// GetCFilters asks for the basic filters of the blocks from height start
// on (getcfilters), one for each hash in blocks (at most
// MaxCFiltersPerRequest), and calls
// fn with each filter's position in blocks and its bytes, in order. Each
// filter must be of the requested type and for the block at its position.
// fn must check the filter against its filter header: the payload
// checksum is left to that check (see frame.go). An error from fn drops
// the connection (the rest of the answer would be read by the next
// request) and is returned as is, unless the filter does not match the
// checksum the node gave it: that is reported with ErrDamaged, as damage
// on the way rather than a lie; so is a filter for another block or type
// that fails its checksum.
//
// fn runs on the connection's read loop as each filter is read, so that
// the filters of an answer cost no hand-off between goroutines and none
// is read ahead of fn: it must not block, nor call p. It never runs
// after GetCFilters returned. A node that sends no more of the answer
// ends it at once with an *UnansweredError (see the package
// documentation), as GetCFHeaders and GetCFCheckpt do.
func (p *Peer) GetCFilters(ctx context.Context, start int32, blocks []chainhash.Hash, fn func(i int, data []byte) error) error {
	return p.GetCFiltersSummed(ctx, start, blocks, func(i int, data []byte, _ PayloadSum) error { return fn(i, data) })
}

// PayloadSum is the payload checksum a node gave a filter, for a check
// made later than its read (see GetCFiltersSummed).
type PayloadSum struct {
	sum     [4]byte
	checked bool
}

// Intact reports whether the filter data for block is, byte for byte,
// the one its node sent: its cfilter message's payload has the checksum
// the node gave it (true without a look when the checksum was checked as
// it was read). A filter found wrong after it was read, that arrived
// intact, is its node's word; one that did not is damage on the way.
func (s PayloadSum) Intact(block chainhash.Hash, data []byte) bool {
	if s.checked {
		return true
	}
	var b bytes.Buffer
	msg := wire.MsgCFilter{FilterType: wire.GCSFilterRegular, BlockHash: block, Data: data}
	if err := msg.BtcEncode(&b, wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		return false
	}
	return sumOK(b.Bytes(), s.sum)
}

// GetCFiltersSummed is GetCFilters whose fn is also given each filter's
// payload checksum, so that a caller that checks a filter only later can
// still tell a lie from damage on the way (see PayloadSum.Intact).
func (p *Peer) GetCFiltersSummed(ctx context.Context, start int32, blocks []chainhash.Hash, fn func(i int, data []byte, sum PayloadSum) error) error {
	const op = "getcfilters"
	if len(blocks) == 0 {
		return nil
	}
	end, err := p.begin(ctx, op)
	if err != nil {
		return err
	}
	defer end()
	if err := p.needCF(op); err != nil {
		return err
	}
	if len(blocks) > MaxCFiltersPerRequest {
		return p.errorf(op, "peer: %d filters asked for, at most %d per request", len(blocks), MaxCFiltersPerRequest)
	}
	msgs := (len(blocks) + wire.MaxGetCFiltersReqRange - 1) / wire.MaxGetCFiltersReqRange
	within := time.Duration(msgs) * p.cfg.Timeout
	deadline := time.Now().Add(within)
	if r := p.req.Load(); r != nil {
		r.within = within
	}
	for i := 0; i < len(blocks); i += wire.MaxGetCFiltersReqRange {
		stop := blocks[min(len(blocks), i+wire.MaxGetCFiltersReqRange)-1]
		if err := p.send(ctx, op, wire.NewMsgGetCFilters(wire.GCSFilterRegular, uint32(start)+uint32(i), &stop), deadline); err != nil {
			return err
		}
	}
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return err
	}
	run := &filterRun{blocks: blocks, fn: fn, nonce: nonce}
	m, err := p.await(ctx, op, deadline, wanted{run.want, len(blocks), run.take})
	run.stop()
	if err != nil {
		return err
	}
	if !run.wrong && run.err == nil {
		if run.next < len(blocks) {
			return p.unanswered(op, run.next, len(blocks))
		}
		return nil
	}
	cf, i := m.(*wire.MsgCFilter), run.next
	if !p.intact(cf) {
		return p.damaged(op, "the filter for block %v (height %d)", blocks[i], start+int32(i))
	}
	if run.wrong {
		return p.fail(op, "%w: filter of type %d for block %v, expected type 0 for %v (height %d)",
			ErrBadFilter, cf.FilterType, cf.BlockHash, blocks[i], start+int32(i))
	}
	p.drop()
	return run.err
}

// filterRun is a getcfilters answer as the read loop takes it: each
// filter is checked to be for the block at its position and handed to
// fn there, until one fails, the last was taken, or the barrier's pong
// came first (see the package documentation).
type filterRun struct {
	blocks []chainhash.Hash
	fn     func(i int, data []byte, sum PayloadSum) error
	nonce  uint64 // the barrier's

	mu      sync.Mutex // held while fn runs
	next    int        // the position of the filter taken next, or of the one that failed
	wrong   bool       // the filter at next is for another block or type
	err     error      // fn's, on the filter at next
	stopped bool       // take calls fn no more
}

// want is the request's want (see wanted): a filter while some are
// due, or the barrier's pong. It runs on the read loop.
func (f *filterRun) want(m wire.Message) bool {
	if isPong(m, f.nonce) {
		return true
	}
	_, ok := m.(*wire.MsgCFilter)
	f.mu.Lock()
	defer f.mu.Unlock()
	return ok && f.next < len(f.blocks)
}

// take is the request's take (see wanted): it runs on the read loop.
// The answer ends early if the barrier's pong comes first.
func (f *filterRun) take(d delivery) (done bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return true
	}
	if isPong(d.msg, f.nonce) {
		f.stopped = true
		return true
	}
	cf := d.msg.(*wire.MsgCFilter)
	if cf.FilterType != wire.GCSFilterRegular || cf.BlockHash != f.blocks[f.next] {
		f.wrong, f.stopped = true, true
		return true
	}
	if f.err = f.fn(f.next, cf.Data, PayloadSum{d.sum, d.checked}); f.err != nil {
		f.stopped = true
		return true
	}
	f.next++
	f.stopped = f.next == len(f.blocks)
	return f.stopped
}

// stop returns once fn is not running, and makes sure it runs no more.
func (f *filterRun) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
}

// needCF refuses compact-filter requests to a node without the service:
// btcd v0.24.2 crashes on them when it runs without compact filters.
func (p *Peer) needCF(op string) error {
	return p.need(op, wire.SFNodeCF, "NODE_COMPACT_FILTERS (BIP 157)")
}
