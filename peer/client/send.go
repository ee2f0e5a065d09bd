package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// SendResult says what became of a transaction sent to the peers.
type SendResult struct {
	Txid chainhash.Hash
	// Given lists the peers the transaction was given to, in order: those
	// whose inv was written. A peer whose turn ended before (the send
	// cancelled, its connection lost, its question failed) is not
	// listed, nor one that held the transaction when its turn began
	// (it counts in Seen).
	Given []string
	// Accepted lists the peers that say they hold the transaction in
	// their mempool (they asked for it and hold it, or had it already).
	// A peer's own word proves nothing: a peer that echoes what it is
	// given says the same.
	Accepted []string
	// Seen lists the peers that held the transaction without being given
	// it by this send: it reached them through the network, so some node
	// accepted and relayed it. Without one, Warnings says acceptance is
	// unconfirmed.
	Seen []string
	// Announced maps the peers that announced the transaction during the
	// send, on a connection of the client's own that asks for
	// announcements (peer.TxWatch), to how long after the send began
	// the announcement was checked (the transaction fetched from the
	// peer, its txid the same). A node announces a transaction once its
	// mempool took it, and never back to the connection it got it from:
	// a peer it was not given to proves it propagated (it counts in
	// Seen); a peer it was given to says it took it (it counts in
	// Accepted), on its word alone. Bitcoin Core serves no transaction
	// of its mempool by getdata before it announced it, so its
	// acceptance is known this way only.
	Announced map[string]time.Duration
	// SeenAlone, if not nil, says that propagation rests on one peer's
	// word: Seen holds one peer, which held the transaction without
	// being given it while no other did. Peers of one party, one passing
	// what it is given to the other alone, look the same: nothing
	// honest need have seen it.
	SeenAlone *OnePeersWord
	// Mined, if not nil, is the block of the chain that already holds the
	// transaction: nothing was to be sent.
	Mined *Confirmation
	// Failed maps the peers that did not take the transaction to what
	// happened (a *peer.RejectError for a rejection, a
	// *peer.FalseAnnounceError for an announcement not borne out, an
	// *UnservedAnnounceError for one not served within askWait).
	Failed map[string]error
	// LeftOut maps the peers the send left out before it began, live
	// but their connection ended and not dialled again (see sendable), to
	// why: their node ended the connection and their next dial was not
	// due soon (they were dropped, the end counted), or the send's
	// context ended while they were dialled. Nil when none was.
	LeftOut map[string]error
	// Warnings say what makes the result less than it looks.
	Warnings []string
}

// OnePeersWord is propagation resting on one peer's word (see
// SendResult.SeenAlone).
type OnePeersWord struct {
	// Seen is the peer that held the transaction without being given
	// it.
	Seen string
	// Given lists the peers given it before, from one of which Seen
	// may have had it alone.
	Given []string
}

// String says what w means, naming its peers.
func (w *OnePeersWord) String() string {
	return fmt.Sprintf("propagation rests on one peer's word: %s held or announced the transaction without being given it, and no other peer did; peers of one party, %s passing what it is given to %s alone, would look the same",
		w.Seen, strings.Join(w.Given, ", "), w.Seen)
}

// Propagated reports whether the network is known to hold the
// transaction: a peer it was not given to holds it, or it is mined. One
// such peer alone is its word (see SeenAlone).
func (r *SendResult) Propagated() bool { return len(r.Seen) > 0 || r.Mined != nil }

// MinedSearchDepth is how many of the chain's last blocks SendTransaction
// searches, by their compact filters, for a transaction no peer asks for.
const MinedSearchDepth = 144

// SendTransaction sends tx so that its acceptance is known from a peer
// other than the one that took it. Peers that hold it already count as
// having seen it. Otherwise it is given to one peer at a time, in random
// order (announced, served when asked, then looked for in the peer's
// mempool or awaited as the peer's announcement on a watch connection:
// see peer.BroadcastWatched), and after each the peers it was not given
// to are asked whether they hold it, or watched for their announcement,
// for up to the timeout; the first that does proves it propagated, and
// the rest are given it at once. The peers are asked whether they hold
// it all at once, each at most once at a time. The first turn begins
// once every peer answered, or a quarter of askWait passed (half a
// second; askWait is two seconds, through Config.Proxy half the timeout
// if longer), so that a peer's speed does not buy it the first turn; the
// answers in by then tell which peers held it before anything was
// given, and one that says so later ends the turns at once, for a peer
// whose turn has not begun. A peer whose answer is not in by then has
// its turn after the others, once its answer is in; until then it
// counts as not holding it, and only a transaction it serves counts as
// holding it. A question is cut
// short askWait after it was written, not after it was asked (one
// waiting for its connection, another request under way there, is
// not): the peer's connection is then dropped (replaced at the next
// send), its failure says so (CutShortError), and no other peer's answer
// waits for it. A question the connection's writer took is answered or
// cut short even when ctx ends: the send returns askWait after it was
// written at most, the given peer's own check in its turn (bounded by
// the timeout, so that btcd has time for its verdict) the timeout after
// (its write, to a node that stopped reading, ends at the timeout, the
// connection dropped); nothing else ctx ends on the peer's own
// connection drops it. A peer's watch
// (peer.TxWatch) is opened when the send begins; the peer's turn waits
// for it watchOpenWait at most (through Config.Proxy, half the timeout
// if that is longer). A
// watch that proves a lie or floods bans its peer, however the send
// ends; a peer whose watch announced the transaction falsely counts for
// nothing, whatever its own connection said. An announcement heard
// before the send ends is checked (the transaction asked for on the
// watch) for askWait at most after it was asked for: one not served by
// then closes the watch, and its peer counts for nothing, as after a
// notfound there (an *UnservedAnnounceError; silence proves no lie, no
// ban). When no peer has taken it
// after two seconds, the chain's last MinedSearchDepth blocks are
// searched for it (a node does not ask for a transaction it has in the
// chain): if one holds it, SendResult.Mined says where and nothing else
// is waited for. A block only one of several peers' chains reaches (see
// ScanResult.OnePeer) is not taken as holding it: that would rest on
// one peer, which could mine the transaction in a block it shows nobody
// and so keep it from the others; the send goes on, and Warnings names
// that block and that peer. The search's
// requests run under peer.FinishBegun: when ctx ends, the search begins
// no request more, and the one under way on a peer's own connection (a
// getheaders, getcfilters, getdata) is answered or ends at its deadline
// (the timeout after it was sent; a node silent until then is dropped,
// as ever), so that a cancel keeps an honest peer's connection, the send
// returning once that answer is in.
//
// A peer given the transaction that gives no verdict of its own (a node
// that is not btcd, as Bitcoin Core: see NotConfirmedError) has its
// watch awaited when the turns are over, until coreAnnounceWait after it
// was given it, while nothing proves the transaction propagated: its
// announcement is then its acceptance, on its word, and a lie told
// there is caught. Once a peer not given the transaction proves it
// propagated (its watch announced it, even during another peer's turn,
// or its mempool shows it), such a peer is waited for no longer, in its
// turn or after, than the second it is left to ask for it (see
// peer.Peer.BroadcastUntil: a false announcement heard by then is
// caught): it is not confirmed (NotConfirmedError.Proven), its word
// adding nothing to the proof, and the send ends once the btcd peers
// gave their verdicts. No other watch is awaited when the send ends: a
// peer whose own connection answered, or that was seen, would only say again
// what it said, and a proof of propagation needs nothing more. A watch
// that hears after the send ended is not read (it is closed): a lie
// told there is not seen, and the peer's word counts as it did.
//
// It fails, naming every peer, only when no peer took the transaction and
// it is not in the chain; with a *NoneConfirmedError (ErrNotConfirmed
// alone) when no peer gave a verdict.
func (c *Client) SendTransaction(ctx context.Context, tx *wire.MsgTx) (*SendResult, error) {
	// The members the pool counts live, also those pool.Pool.Serving
	// leaves out because their node ended their connection and the
	// backoff counting that end sets is far off: a send takes each such
	// end in (see sendable) and names the member in its result's
	// LeftOut, where, picked from Serving, it was not given the
	// transaction without a word.
	ms, leftOut := c.sendable(ctx, c.pool.Live())
	if len(ms) == 0 {
		return nil, c.noPeers("send")
	}
	rand.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	s := &sending{c: c, tx: tx, start: time.Now(), offered: map[string]bool{}, unsure: map[string]time.Time{}, unserved: map[string]*UnservedAnnounceError{}, proven: make(chan struct{}),
		res:    &SendResult{Txid: tx.TxHash(), Failed: map[string]error{}, Announced: map[string]time.Duration{}, LeftOut: leftOut},
		asking: asking{last: map[*pool.Member]*answer{}, news: make(chan struct{}), cut: map[string]error{}}}
	// Runs last: no ask outlives the send. An ask still waiting for its
	// connection gives up, the connection kept; one written is answered
	// or cut short within askWait (see peer.Peer.HasTxWithin).
	askCtx, cancelAsks := context.WithCancel(ctx)
	s.askCtx = askCtx
	defer func() {
		cancelAsks()
		s.asks.Wait()
	}()
	s.openWatches(ctx, ms)
	defer s.closeWatches()
	sendCtx, cancelSend := context.WithCancel(ctx)
	defer cancelSend()
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		s.send(sendCtx, ms)
	}()
	// It ends once sent is closed, when its request under way (to a
	// peer's own connection, not cut short) is answered.
	proofDone := make(chan struct{})
	go func() {
		defer close(proofDone)
		s.watchProof(ctx, ms, sent)
	}()
	defer func() { <-proofDone }()
	// A node does not ask for a transaction it has in the chain: when no
	// peer has taken it after minedGrace, the chain is searched. The
	// search is not cut short (that would drop the connections it uses):
	// ended by ctx, it lets the request under way finish (FinishBegun);
	// its answer decides only while no peer has taken the transaction.
	grace := time.NewTimer(minedGrace)
	defer grace.Stop()
	var mined chan minedSearch // nil until the search starts
	for {
		select {
		case <-grace.C:
			if !s.taken() {
				mined = make(chan minedSearch, 1)
				go func() { mined <- c.findMined(peer.FinishBegun(ctx), tx) }()
			}
			continue
		case found := <-mined:
			mined = nil
			if s.noteAlone(found) {
				continue
			}
			cancelSend()
			<-sent
			return s.minedAt(found.conf, ms), nil
		case <-sent:
		}
		if mined != nil && !s.taken() {
			if found := <-mined; !s.noteAlone(found) {
				return s.minedAt(found.conf, ms), nil
			}
		}
		break
	}
	return s.finish(ctx, ms)
}

// minedGrace is how long a send waits for a peer to take the transaction
// before it searches the chain for it.
const minedGrace = 2 * time.Second

// noteAlone takes in what the chain search found: it reports whether
// the transaction is not known mined, and adds to the warnings a block
// holding it that only one peer's chain reaches.
func (s *sending) noteAlone(found minedSearch) bool {
	if found.alone != "" {
		s.mu.Lock()
		s.res.Warnings = append(s.res.Warnings, found.alone)
		s.mu.Unlock()
	}
	return found.conf == nil
}

// minedAt reports the transaction mined at conf: nothing was to be sent,
// and no peer's failure to take it counts. The peers' watches are still
// looked at (see lateSightings): a watch that proved a lie or flooded
// bans its peer, and is named in Failed or the warnings.
func (s *sending) minedAt(conf *Confirmation, ms []*pool.Member) *SendResult {
	s.mu.Lock()
	s.res.Mined = conf
	s.res.Failed = map[string]error{}
	s.mu.Unlock()
	s.awaitChecks(ms)
	for _, err := range s.lateSightings(ms) {
		s.res.Warnings = append(s.res.Warnings, "announcement connection: "+err.Error())
	}
	return s.res
}

// taken reports whether a peer took the transaction.
func (s *sending) taken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.res.Accepted) > 0
}

// sending is the state of one SendTransaction.
type sending struct {
	c     *Client
	tx    *wire.MsgTx
	start time.Time
	mu    sync.Mutex
	res   *SendResult
	// unsure holds, by address, when each peer that gave no verdict of
	// its own was given the transaction (see peer.NoVerdictError): its watch is
	// awaited until coreAnnounceWait after, unless propagation is
	// proven first (see awaitUnsure).
	unsure map[string]time.Time
	// givenBefore lists the peers given the transaction before a peer
	// not given it was last looked at (see waitHeld).
	givenBefore []string
	// offered holds the peers whose turn began (see give).
	offered map[string]bool
	// silentTurn: the peer whose turn it is is not btcd, and may give
	// no verdict of its own (see watchProof).
	silentTurn bool
	// proven is closed once a peer not given the transaction proved it
	// propagated (see prove): a peer that gives no verdict of its own is
	// not waited for after that.
	proven    chan struct{}
	proveOnce sync.Once
	// unserved holds, by address, the peers whose watch's check of an
	// announcement was not answered within its bound (see awaitChecks).
	unserved map[string]*UnservedAnnounceError
	// provedBy is the peer not given the transaction that proved it
	// propagated (see watchProof), counted as seen even if it no longer
	// shows it when the turn ends: it served the transaction unasked.
	provedBy *pool.Member
	watching
	asking
}

// prove records that the transaction is known to have propagated.
func (s *sending) prove() { s.proveOnce.Do(func() { close(s.proven) }) }

// isProven reports whether prove was called.
func (s *sending) isProven() bool {
	select {
	case <-s.proven:
		return true
	default:
		return false
	}
}

// watching is a send's announcement connections (peer.TxWatch), one to
// each peer, opening while the send goes on.
type watching struct {
	// opening holds, by address, a channel closed once the peer's watch
	// opened or failed to; written before the dials begin.
	opening map[string]chan struct{}
	// due is when a peer's turn stops waiting for its watch to open.
	due  time.Time
	stop context.CancelFunc // ends the dials still under way
	wg   sync.WaitGroup     // the dials

	mu sync.Mutex
	// watches are the peers' open watches, by address; a peer whose
	// watch could not be opened has none.
	watches map[string]*peer.TxWatch
	// unopened holds, by address, the error of a watch that failed to
	// open with a fault that earns its peer a ban (see watchBans): a
	// flood that began before the watch's opening ping was answered.
	unopened map[string]error
	closed   bool // the send ended: a watch that opens now is closed
}

// send gives the transaction to one peer at a time, in the order
// firstAnswers sets, until a peer it was not given to holds it.
func (s *sending) send(ctx context.Context, ms []*pool.Member) {
	held, rest := s.firstAnswers(ctx, ms)
	s.mu.Lock()
	s.res.Seen, s.res.Accepted = addrs(held), addrs(held)
	s.mu.Unlock()
	if len(held) > 0 {
		s.prove()
		rest = without(ms, held)
	}
	for len(held) == 0 && len(rest) > 0 && ctx.Err() == nil {
		m := rest[0]
		// Its answer is in before its turn begins: a peer that held the
		// transaction before it was given it proves it propagated, and
		// so does any other whose answer came in since it was last
		// looked at.
		s.awaitAnswer(ctx, m)
		if held = s.heldNow(rest); len(held) > 0 {
			s.seen(held)
			rest = without(rest, held)
			break
		}
		rest = rest[1:]
		took := s.give(ctx, m)
		if s.wasSeen(m) {
			// It held the transaction when its turn began.
			held = []*pool.Member{m}
			continue
		}
		if len(rest) == 0 || !took && !s.isProven() {
			// Refused (the next peer is tried at once), or nobody left
			// to see it. A peer not given it that proved propagation
			// during the turn is counted below.
			continue
		}
		held = s.waitHeld(ctx, rest)
		s.mu.Lock()
		if p := s.provedBy; len(held) == 0 && p != nil && slices.Contains(rest, p) {
			// It proved propagation, then stopped showing the
			// transaction (a notfound, a connection lost): the proof
			// stands, and so does what it cut short.
			held = []*pool.Member{p}
		}
		s.mu.Unlock()
		s.seen(held)
		rest = without(rest, held)
	}
	// It propagated: the others get it at once.
	var wg sync.WaitGroup
	for _, m := range rest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.give(ctx, m)
		}()
	}
	wg.Wait()
}

// without returns the peers of ms not in out, in order.
func without(ms, out []*pool.Member) []*pool.Member {
	return slices.DeleteFunc(slices.Clone(ms), func(m *pool.Member) bool { return slices.Contains(out, m) })
}

// seen records held, peers not given the transaction that hold it, as
// seen and accepted, the propagation as proven if there is one, and the
// peers given it so far as those it may have come from (givenBefore).
func (s *sending) seen(held []*pool.Member) {
	if len(held) > 0 {
		s.prove()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.givenBefore = slices.Clone(s.res.Given)
	s.res.Seen = append(s.res.Seen, addrs(held)...)
	s.res.Accepted = append(s.res.Accepted, addrs(held)...)
}

// wasSeen reports whether m is among the peers seen holding the
// transaction without being given it.
func (s *sending) wasSeen(m *pool.Member) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.res.Seen, m.Addr())
}

// give broadcasts the transaction to m, records the outcome, and reports
// whether m took it: its mempool shows it, or it announced it to m's
// watch. m counts as given it (SendResult.Given) only once its inv was
// written: a turn ended before (ctx, a failed question, a lost
// connection) told it nothing, and one that found it holding the
// transaction already counts it as seen (see seen).
//
// A peer that gives no verdict of its own (see peer.NoVerdictError) is
// waited for no longer once propagation is proven (see watchProof): its
// word would add nothing to the proof. It is then not confirmed, Proven
// saying why; its watch is still read when the send ends.
func (s *sending) give(ctx context.Context, m *pool.Member) bool {
	given := time.Now()
	conn, err := s.readyConn(ctx, m, "tx")
	s.mu.Lock()
	s.offered[m.Addr()] = true
	if err != nil {
		s.res.Failed[m.Addr()] = err
		s.mu.Unlock()
		return false
	}
	s.silentTurn = !conn.GivesVerdict()
	s.mu.Unlock()
	sighting, told, err := conn.BroadcastUntil(ctx, s.tx, s.watchFor(ctx, m.Addr()), s.proven)
	if !told && errors.Is(err, peer.ErrAbandoned) && ctx.Err() == nil {
		// Dropped, before anything was sent, by another request of this
		// client's, abandoned: the node is given it over a new one.
		if conn, err = s.readyConn(ctx, m, "tx"); err == nil {
			sighting, told, err = conn.BroadcastUntil(ctx, s.tx, s.watchFor(ctx, m.Addr()), s.proven)
		}
	}
	s.mu.Lock()
	s.silentTurn = false
	s.mu.Unlock()
	if err == nil && !told {
		// It held the transaction before anything was announced to it:
		// it came through the network, as to a peer whose turn is to
		// come.
		s.seen([]*pool.Member{m})
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if told {
		s.res.Given = append(s.res.Given, m.Addr())
	}
	if err != nil {
		if cut := s.cutShort(m); cut != nil && errors.Is(err, peer.ErrDisconnected) {
			err = &CutShortError{Cut: cut, Err: err}
		}
		var nv *peer.NoVerdictError
		if errors.As(err, &nv) {
			err = &NotConfirmedError{Peer: m.Addr(), Txid: s.res.Txid, Waited: time.Since(given), Proven: nv.Enough, Cause: err}
			if !nv.Enough {
				s.unsure[m.Addr()] = given
			}
		}
		s.res.Failed[m.Addr()] = err
		return false
	}
	if sighting != nil {
		s.res.Announced[m.Addr()] = s.since(sighting)
	}
	s.res.Accepted = append(s.res.Accepted, m.Addr())
	return true
}

// firstAnswers asks every peer of ms at once whether it holds the
// transaction, before any is given it, and returns those that do; if none
// does, it returns instead the order of the turns: first the peers that
// said they do not hold it, then those whose ask failed (a connection
// lost: their turn fails at once), then those whose answer is not in,
// each in the order of ms (random). It returns as soon as one peer holds
// it, or every answer is in, or firstWait passed (counted from the
// call), or ctx ended. Speed buys no peer the first turn, which tells
// its peer where the transaction came from: every answer within
// firstWait counts alike, and only a peer slower than that (or silent)
// goes after the others, so that it delays the first turn by firstWait
// at most and no turn but its own after (see send): its answer, when it
// comes, is looked at like any other of a peer whose turn has not begun
// (see waitHeld, watchProof).
func (s *sending) firstAnswers(ctx context.Context, ms []*pool.Member) (held, order []*pool.Member) {
	for _, m := range ms {
		s.ask(m)
	}
	bound := time.NewTimer(s.c.firstWait())
	defer bound.Stop()
	for over := false; ; {
		news := s.newsOf()
		var no, failed, unknown []*pool.Member
		for _, m := range ms {
			a := s.lastAnswer(m)
			switch in, h := a.in(); {
			case h:
				held = append(held, m)
			case in && a.err == nil:
				no = append(no, m)
			case in:
				failed = append(failed, m)
			default:
				unknown = append(unknown, m)
			}
		}
		if len(held) > 0 {
			return held, nil
		}
		if len(unknown) == 0 || over {
			return nil, slices.Concat(no, failed, unknown)
		}
		select {
		case <-news:
		case <-bound.C:
			over = true
		case <-ctx.Done():
			over = true
		}
	}
}

// firstWait is how long a send waits for the peers' first answers
// before its first turn: a quarter of askWait (half a second on a direct
// connection; an honest node answers in one round trip).
func (c *Client) firstWait() time.Duration { return c.askWait() / 4 }

// heldNow returns the peers of ms whose last answer (see asking.last) is
// in and says they hold the transaction.
func (s *sending) heldNow(ms []*pool.Member) []*pool.Member {
	var held []*pool.Member
	for _, m := range ms {
		if s.lastAnswer(m).holds() {
			held = append(held, m)
		}
	}
	return held
}

// awaitAnswer waits until m's ask in flight, if there is one, is
// answered or cut short (askWait after its getdata was written), or ctx
// ends.
func (s *sending) awaitAnswer(ctx context.Context, m *pool.Member) {
	if a := s.lastAnswer(m); a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
		}
	}
}

// asking is a send's questions to its peers whether they hold the
// transaction (getdata): at most one in flight to each peer, each cut
// short askWait after it began (see Client.askWait), so that a peer
// that answers slowly or never holds up no one but itself.
type asking struct {
	askMu sync.Mutex
	// last holds each peer's last ask: in flight until its answer is
	// in, then that answer, until the peer is asked again. It is the one
	// record of the asks: what looks for a peer's answer reads it here.
	last map[*pool.Member]*answer
	// news is closed, and replaced, each time an answer comes in: what
	// waits for an answer, any, waits on it (see newsOf).
	news chan struct{}
	// cut holds, by address, the error of each peer whose ask was cut
	// short (its connection dropped for it): the cause of the failures
	// that follow (see give).
	cut  map[string]error
	asks sync.WaitGroup // the asks in flight
	// askCtx is every ask's context: the send's, ended when it returns.
	askCtx context.Context
}

// CutShortError is the failure of a peer whose connection was dropped
// because it did not answer in time whether it held the transaction
// (Cut), reported by what failed on it next (Err, which wraps
// peer.ErrDisconnected): errors.Is and errors.As see both.
type CutShortError struct {
	Cut, Err error
}

func (e *CutShortError) Error() string { return e.Cut.Error() + "; then " + e.Err.Error() }

// Unwrap returns Cut and Err.
func (e *CutShortError) Unwrap() []error { return []error{e.Cut, e.Err} }

// answer is a peer's answer to an ask, once done is closed: held says
// it served the transaction. A peer that did not answer within the
// bound, or failed, did not hold it: only a proof counts.
type answer struct {
	done chan struct{}
	held bool      // written before done is closed
	at   time.Time // when it came in; written before done is closed
	err  error     // why the ask failed, if it did; written before done is closed
}

// in reports whether a is in, and if so whether the peer held the
// transaction; a nil answer (the peer never asked) is not in.
func (a *answer) in() (in, held bool) {
	if a == nil {
		return false, false
	}
	select {
	case <-a.done:
		return true, a.held
	default:
		return false, false
	}
}

// holds reports whether a is in and says the peer held the transaction.
func (a *answer) holds() bool {
	_, held := a.in()
	return held
}

// ask asks m whether it holds the transaction, and returns the answer
// to come: that of the ask of m in flight, if there is one, or of a new
// one. Its answer is due askWait after the getdata is written, not
// after the ask began: an ask waiting for the connection (a block
// coming slowly) is not cut short for that. One not answered by then
// drops the connection (replaced at the next send), and is recorded as
// cut short; one that never went out records nothing.
func (s *sending) ask(m *pool.Member) *answer {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	if a := s.last[m]; a != nil {
		if in, _ := a.in(); !in {
			return a
		}
	}
	a := &answer{done: make(chan struct{})}
	s.last[m] = a
	s.asks.Add(1)
	go func() {
		defer s.asks.Done()
		var held bool
		var err error
		for try := 0; try < 2; try++ {
			var conn *peer.Peer
			if conn, err = s.readyConn(s.askCtx, m, "getdata tx"); err == nil {
				held, err = conn.HasTxWithin(s.askCtx, s.res.Txid, s.c.askWait())
			}
			// Asked once more over a new connection when another request
			// of this client's, abandoned, dropped it.
			if !errors.Is(err, peer.ErrAbandoned) || s.askCtx.Err() != nil {
				break
			}
		}
		s.askMu.Lock()
		defer s.askMu.Unlock()
		if te := (*peer.TimeoutError)(nil); errors.As(err, &te) {
			s.cut[m.Addr()] = peerErr(m, "getdata tx", &peer.TimeoutError{What: "no answer whether it holds the transaction (the connection was dropped for it)", Within: te.Within})
		}
		a.held, a.at, a.err = held, time.Now(), err
		close(a.done)
		close(s.news)
		s.news = make(chan struct{})
	}()
	return a
}

// sendable returns the members of ms a send may go to: their connection
// open, or dialled again. A connection dropped by an abandoned request is
// replaced, and one its node ended itself, only if the member's next
// dial is due soon (see pool.Pool.RedialDue): a node that hangs up after
// each answer does not hold the send for its backoff. A member whose
// node ended its connection is dropped, its end counted once; one whose
// redial ctx ended is left out of the send alone, charged nothing. Both
// are returned in leftOut (nil if none), with why, for the result. A
// member whose connection this client dropped (an abandoned request)
// and whose next dial is far off (a sit-out set meanwhile) is left out
// too, charged nothing.
func (c *Client) sendable(ctx context.Context, ms []*pool.Member) (out []*pool.Member, leftOut map[string]error) {
	for _, m := range ms {
		err := c.pool.RedialDue(ctx, m)
		if err == nil {
			out = append(out, m)
			continue
		}
		c.logf("%s: left out of the send: %v", m.Addr(), err)
		if leftOut == nil {
			leftOut = map[string]error{}
		}
		leftOut[m.Addr()] = err
		if ctx.Err() == nil && !errors.Is(err, peer.ErrAbandoned) {
			c.pool.Drop(m, err)
		}
	}
	return c.pool.Keep(out), leftOut
}

// readyConn is connOf, m dialled again first when its connection has
// ended (see Client.ready): a request of this client's that it
// abandoned drops the connection of a peer that did nothing wrong.
func (s *sending) readyConn(ctx context.Context, m *pool.Member, op string) (*peer.Peer, error) {
	if s.c.pool.Conn(m) != nil {
		if err := s.c.ready(ctx, m); err != nil {
			return nil, peerErr(m, op, err)
		}
	}
	return s.connOf(m, op)
}

// connOf returns m's connection, or, once m left the pool during the
// send (Client.RemovePeer: the pool then holds no connection of it), an
// error for op wrapping peer.ErrDisconnected.
func (s *sending) connOf(m *pool.Member, op string) (*peer.Peer, error) {
	if p := s.c.pool.Conn(m); p != nil {
		return p, nil
	}
	return nil, peerErr(m, op, fmt.Errorf("%w: removed from the client's peers during the send", peer.ErrDisconnected))
}

// newsOf returns the channel closed when the next answer comes in: taken
// before the answers are looked at, it misses none.
func (s *asking) newsOf() <-chan struct{} {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	return s.news
}

// lastAnswer returns m's last ask (see asking.last), or nil if m was
// never asked.
func (s *asking) lastAnswer(m *pool.Member) *answer {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	return s.last[m]
}

// cutShort returns the error of m's ask cut short, or nil.
func (s *asking) cutShort(m *pool.Member) error {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	return s.cut[m.Addr()]
}

// askWait bounds how long a send waits for a peer's answer to whether
// it holds the transaction, as watchOpenWait bounds its wait for a
// watch to open, and for the same reason: a node answers a getdata in
// a round trip, and one that does not within that bound would hold up
// every turn to the timeout. The ask is cut short then, askWait after
// it was written: the peer counts as not holding the transaction.
func (c *Client) askWait() time.Duration { return c.watchOpenWait() }

// sendPoll is how often the peers a transaction was not given to are
// asked whether they hold it.
const sendPoll = 250 * time.Millisecond

// waitHeld asks the peers of ms, not given the transaction, whether
// they hold it, until one does, or announced it, or the timeout passes,
// and returns those that do. Each is asked at once (or its ask in
// flight joined: see ask), and again sendPoll after its answer came in;
// an answer is looked at as soon as it comes, a watch every proofPoll.
// A peer slow or silent holds up no other's questions: its ask is cut
// short askWait after it was written, and until then it counts as not
// holding the transaction.
func (s *sending) waitHeld(ctx context.Context, ms []*pool.Member) []*pool.Member {
	begun := time.Now()
	deadline := time.NewTimer(s.c.timeout())
	defer deadline.Stop()
	tick := time.NewTicker(proofPoll)
	defer tick.Stop()
	for last := false; ; {
		news := s.newsOf()
		if held := s.announcing(ms); len(held) > 0 {
			return held
		}
		held := s.heldNow(ms)
		if len(held) > 0 || last {
			return held
		}
		for _, m := range ms {
			a := s.lastAnswer(m)
			if in, _ := a.in(); a == nil || in && (a.at.Before(begun) || time.Since(a.at) >= sendPoll) {
				s.ask(m)
			}
		}
		select {
		case <-news:
		case <-tick.C:
		case <-deadline.C:
			last = true
		case <-ctx.Done():
			return nil
		}
	}
}

// proofPoll is how often, during a peer's turn, the watches of the peers
// not given the transaction are looked at for a proof of propagation;
// their mempools are asked every sendPoll.
const proofPoll = 50 * time.Millisecond

// watchProof closes s.proven once a peer whose turn has not begun holds
// the transaction: its watch holds a checked announcement, or its
// mempool shows it (asked every sendPoll while the peer whose turn it is
// is not btcd, whose verdict comes at once: btcd announces on a trickle
// of 10 s, but serves what its mempool took at once), or the send ended
// (sent closed). The peers are asked at once, each at most once at a
// time and for askWait at most (see ask): one slow or silent peer
// delays no other's answer. The peer is recorded as seen by waitHeld,
// once the turn under way ends (as provedBy, if it shows it no longer
// then): a peer that gives no verdict of its own, whose turn it is, is
// then waited for no longer. The asks still in flight when it returns
// are waited for when the send ends.
func (s *sending) watchProof(ctx context.Context, ms []*pool.Member, sent <-chan struct{}) {
	tick := time.NewTicker(proofPoll)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-s.proven:
			return
		case <-sent:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		ask := n%int(sendPoll/proofPoll) == 0 && s.silentTurn
		s.mu.Unlock()
		for _, m := range ms {
			// The last answer is looked at before another ask takes its
			// place.
			if s.heldUnoffered(m) {
				s.mu.Lock()
				s.provedBy = m
				s.mu.Unlock()
				s.prove()
				return
			}
			if ask && !s.isOffered(m) {
				s.ask(m) // the ask in flight, if there is one; else a new one
			}
		}
	}
}

// isOffered reports whether m's turn began.
func (s *sending) isOffered(m *pool.Member) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offered[m.Addr()]
}

// heldUnoffered reports whether m, whose turn has not begun, holds the
// transaction: its watch holds a checked announcement, or its last ask
// (see asking.last) is in and says so. What it holds is looked at
// before whether its turn began: held before, it was not given it.
func (s *sending) heldUnoffered(m *pool.Member) bool {
	if s.isOffered(m) {
		return false
	}
	var held bool
	if w := s.watch(m.Addr()); w != nil {
		sighting, _ := w.Result()
		held = sighting != nil
	}
	if !held {
		held = s.lastAnswer(m).holds()
	}
	return held && !s.isOffered(m)
}

// ErrNotConfirmed: a node was given the transaction and gave no verdict
// on it of its own within the wait (see NotConfirmedError).
var ErrNotConfirmed = errors.New("transaction not confirmed")

// NotConfirmedError is a peer given the transaction Txid that neither
// showed it in its mempool nor announced it within Waited, and gives no
// verdict of its own: a node that does not call itself btcd (Bitcoin
// Core sends no reject since BIP 61 was removed, serves no transaction
// of its mempool by getdata before announcing it, and announces to an
// inbound peer after a random delay, 5 s on average). It may hold the
// transaction, or have refused it: nothing tells which. Proven says it
// was waited for no longer because another peer proved the transaction
// propagated. Watched says whether its announcement could still come on
// a connection of its own (see peer.TxWatch) when the send ended; if
// not, WatchLost is what ended that connection (nil when it never
// opened). Cause is what the broadcast reported (a *peer.PeerError
// wrapping a *peer.NoVerdictError), kept outside the error's chain:
// on the client's errors check ErrNotConfirmed, not peer.ErrNoVerdict.
// It wraps ErrNotConfirmed.
type NotConfirmedError struct {
	Peer      string
	Txid      chainhash.Hash
	Waited    time.Duration
	Proven    bool
	Watched   bool
	WatchLost error
	Cause     error
}

func (e *NotConfirmedError) Error() string {
	why := "a node that is not btcd does not say when it refuses a transaction (Bitcoin Core announces one it took to an inbound peer after 5 s on average, and serves none before)"
	if e.Proven {
		why = "it was waited for no longer once another peer proved the transaction propagated"
	}
	return fmt.Sprintf("peer %s: %v %v: within %v it did not show it in its mempool, and %s; %s",
		e.Peer, ErrNotConfirmed, e.Txid, e.Waited.Round(100*time.Millisecond), e.Announcement(), why)
}

// Announcement says what became of the peer's announcement, in the
// words Error uses: it did not come, though it could have (Watched); it
// could not come, its second connection having ended (WatchLost, named);
// or no second connection to the peer opened.
func (e *NotConfirmedError) Announcement() string {
	switch {
	case e.WatchLost != nil:
		return fmt.Sprintf("could not announce it: its second connection ended (%v)", e.WatchLost)
	case !e.Watched:
		return "could not be watched for its announcement (no second connection to it opened)"
	}
	return "did not announce it"
}

// NoneConfirmedError is a send that ended with no peer having taken the
// transaction Txid, every peer given it having given no verdict of its
// own (see NotConfirmedError): the transaction may be in their mempools,
// or refused by them, and nothing tells which. Peers holds each peer's
// error, a *NotConfirmedError each, in the order of the send's peers;
// errors.Is and errors.As see each (errors.Is(err, ErrNotConfirmed)
// holds).
type NoneConfirmedError struct {
	Txid  chainhash.Hash
	Peers []error
}

func (e *NoneConfirmedError) Error() string {
	return fmt.Sprintf("client: no peer confirmed transaction %v: %v", e.Txid, pool.Errors(e.Peers))
}

// Unwrap returns the error of each peer.
func (e *NoneConfirmedError) Unwrap() []error { return e.Peers }

// Unwrap returns ErrNotConfirmed.
func (e *NotConfirmedError) Unwrap() error { return ErrNotConfirmed }

// watchState says whether addr's announcement can still come on its
// watch (see NotConfirmedError): the watch is open and has not ended
// without a sighting; if it ended so, lost is why.
func (s *watching) watchState(addr string) (watched bool, lost error) {
	w := s.watch(addr)
	if w == nil {
		return false, nil
	}
	if sighting, err := w.Result(); sighting == nil && err != nil {
		return false, err
	}
	return true, nil
}

// coreAnnounceWait is the least a send waits, from when it gave the
// transaction to a peer that gives no verdict of its own (see
// peer.NoVerdictError), for the peer's announcement, while nothing proves the
// transaction propagated: six means of Bitcoin Core's delay before it
// announces to an inbound peer (5 s, a Poisson timer:
// net_processing's INBOUND_INVENTORY_BROADCAST_INTERVAL), so that a Core
// node that took it is heard with probability 1 - e^-6 = 99.75%. The
// timeout, if longer, is waited instead.
const coreAnnounceWait = 30 * time.Second

// awaitUnsure waits for the announcements of the peers given the
// transaction that gave no verdict of their own (see
// peer.NoVerdictError), each
// until coreAnnounceWait, or the timeout if longer, after it was given
// it, while no peer it was not given to proves it propagated: a Core
// node that took it says so only thus. Their watches' checks are read
// by lateSightings. Once propagation is proven nothing is waited for:
// the send is done, and the peers still unsure are not confirmed.
func (s *sending) awaitUnsure(ctx context.Context) {
	s.mu.Lock()
	proven := len(s.res.Seen) > 0
	unsure := maps.Clone(s.unsure)
	s.mu.Unlock()
	if proven {
		return
	}
	wait := max(coreAnnounceWait, s.c.timeout())
	for addr, given := range unsure {
		w := s.watch(addr)
		if w == nil {
			continue
		}
		timer := time.NewTimer(time.Until(given.Add(wait)))
		select {
		case <-w.Done():
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		s.mu.Lock()
		if e, ok := s.res.Failed[addr].(*NotConfirmedError); ok {
			e.Waited = time.Since(given)
		}
		s.mu.Unlock()
	}
}

// markWatched records, in each NotConfirmedError of ms, whether the
// peer's announcement could still come when the send ended (see
// watchState).
func (s *sending) markWatched(ms []*pool.Member) {
	for _, m := range ms {
		watched, lost := s.watchState(m.Addr())
		s.mu.Lock()
		if e, ok := s.res.Failed[m.Addr()].(*NotConfirmedError); ok {
			e.Watched, e.WatchLost = watched, lost
		}
		s.mu.Unlock()
	}
}

// finish fills in the warnings, or fails when no peer took the
// transaction.
func (s *sending) finish(ctx context.Context, ms []*pool.Member) (*SendResult, error) {
	res := s.res
	s.awaitUnsure(ctx)
	s.awaitChecks(ms)
	s.markWatched(ms)
	faults := s.lateSightings(ms)
	slices.Sort(res.Accepted)
	res.Accepted = slices.Compact(res.Accepted)
	slices.Sort(res.Seen)
	if len(res.Accepted) == 0 {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var errs []error
		for _, m := range ms {
			if err, ok := res.Failed[m.Addr()]; ok {
				errs = append(errs, err)
			}
		}
		for _, err := range faults {
			errs = append(errs, fmt.Errorf("announcement connection: %w", err))
		}
		if len(errs) == 0 {
			return res, s.c.noPeers("send")
		}
		if !slices.ContainsFunc(errs, func(err error) bool { return !errors.Is(err, ErrNotConfirmed) }) {
			return res, &NoneConfirmedError{Txid: res.Txid, Peers: errs}
		}
		return res, fmt.Errorf("client: no peer took transaction %v: %w", res.Txid, pool.Errors(errs))
	}
	for _, m := range ms {
		var re *peer.RejectError
		if errors.As(res.Failed[m.Addr()], &re) && re.Kind == peer.RejectInvalid && len(res.Accepted) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"peer %s rejected %v as invalid (%s) while %s say they hold it: one side is not telling the truth",
				m.Addr(), res.Txid, re.Reason, strings.Join(res.Accepted, ", ")))
		}
	}
	for _, err := range faults {
		res.Warnings = append(res.Warnings, "announcement connection: "+err.Error())
	}
	if len(res.Seen) == 1 && len(s.givenBefore) > 0 {
		res.SeenAlone = &OnePeersWord{Seen: res.Seen[0],
			Given: slices.DeleteFunc(slices.Clone(s.givenBefore), func(a string) bool { return a == res.Seen[0] })}
	}
	if len(res.Seen) == 0 {
		why := "no other peer to ask"
		if len(ms) > 1 {
			why = "no peer it was not given to held it or announced it within the timeout"
		}
		how := ""
		if len(res.Announced) > 0 {
			how = fmt.Sprintf(" (%s announced it to a second connection of this client, as a node does with a transaction it accepted: on its own word)",
				strings.Join(slices.Sorted(maps.Keys(res.Announced)), ", "))
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"acceptance of %v is unconfirmed: only the peer(s) it was given to (%s) say they hold it%s, and %s; a peer that echoes the transaction back would look the same (more peers, run by others, would tell)",
			res.Txid, strings.Join(res.Accepted, ", "), how, why))
	}
	return res, nil
}

// openWatches starts opening an announcement connection (peer.TxWatch)
// to each peer of ms, at once, and returns: a peer's turn waits for its
// watch (see watchFor), since a node announces a transaction to the
// peers it has when it takes it. A peer whose watch fails to open is
// only logged: its acceptance is then known from its mempool alone.
func (s *sending) openWatches(ctx context.Context, ms []*pool.Member) {
	s.watches = map[string]*peer.TxWatch{}
	s.opening = map[string]chan struct{}{}
	cfg := s.c.watchConfig()
	s.due = time.Now().Add(s.c.watchOpenWait())
	ctx, s.stop = context.WithCancel(ctx)
	for _, m := range ms {
		opened := make(chan struct{})
		s.opening[m.Addr()] = opened
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(opened)
			cfg := cfg
			cfg.Addr = m.Addr()
			w, err := peer.WatchTx(ctx, cfg, s.tx.TxHash(), peer.CheckWithin(s.c.askWait()))
			if err != nil {
				s.c.logf("send: announcement connection to %s: %v", m.Addr(), err)
				s.failedToOpen(m.Addr(), err)
				return
			}
			if !s.keep(m.Addr(), w) {
				w.Close()
			}
		}()
	}
}

// watchOpenWait bounds how long after a send began a peer's turn waits
// for the peer's announcement connection to open, when the client dials
// directly. A node that answers opens it in a few round trips (a few
// milliseconds on loopback, well under a second across the internet);
// one that takes the connection and never answers its version message
// would otherwise hold every send up to the timeout. A watch that opens
// later is not used in its peer's turn, which goes on without it (the
// node's mempool alone then tells its acceptance); it is still read
// during the turns of other peers (see announcing) and when the send ends
// (see lateSightings), but a node that took the transaction before the
// watch opened does not announce it there.
const watchOpenWait = 2 * time.Second

// watchOpenWait returns how long after a send began a peer's turn waits
// for the peer's watch to open: watchOpenWait, at most the timeout, or,
// through a SOCKS5 proxy (Tor), half the timeout if that is longer: a
// connection through Tor takes a circuit's setup and several round
// trips of a second or more each, so that two seconds would leave most
// watches unopened and the acceptance of a Core node, which only its
// announcement tells, unknown.
func (c *Client) watchOpenWait() time.Duration {
	wait := watchOpenWait
	if c.cfg.Proxy != "" {
		wait = max(wait, c.timeout()/2)
	}
	return min(wait, c.timeout())
}

// keep records addr's open watch w, and reports false once the send has
// ended (w is then the caller's to close).
func (s *watching) keep(addr string, w *peer.TxWatch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.watches[addr] = w
	return true
}

// failedToOpen records err, addr's watch's failure to open, when it
// earns the peer a ban (see watchBans).
func (s *watching) failedToOpen(addr string, err error) {
	if !watchBans(err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unopened == nil {
		s.unopened = map[string]error{}
	}
	s.unopened[addr] = err
}

// openFault returns the fault that kept addr's watch from opening and
// earns a ban, or nil.
func (s *watching) openFault(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unopened[addr]
}

// watch returns addr's open watch, or nil.
func (s *watching) watch(addr string) *peer.TxWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches[addr]
}

// watchFor waits until addr's watch opened or failed, or the wait's
// bound (watchOpenWait after the send began) passed, and returns it, or
// nil.
func (s *watching) watchFor(ctx context.Context, addr string) *peer.TxWatch {
	opened, wait := s.watchReady(addr)
	defer wait.Stop()
	select {
	case <-opened:
	case <-wait.C:
	case <-ctx.Done():
	}
	return s.watch(addr)
}

// watchReady returns what watchFor waits on for addr: a channel closed
// once addr's watch opened or failed (closed already if none is
// opening), and a timer that fires when the wait's bound passes; the
// caller stops it.
func (s *watching) watchReady(addr string) (<-chan struct{}, *time.Timer) {
	opened, ok := s.opening[addr]
	if !ok {
		opened = make(chan struct{})
		close(opened)
	}
	return opened, time.NewTimer(time.Until(s.due))
}

// closeWatches closes the announcement connections, those still opening
// too, and waits for their dials to end.
func (s *watching) closeWatches() {
	s.mu.Lock()
	s.closed = true
	ws := slices.Collect(maps.Values(s.watches))
	s.mu.Unlock()
	if s.stop != nil {
		s.stop()
	}
	for _, w := range ws {
		w.Close()
	}
	s.wg.Wait()
}

// announcing returns the peers of ms whose watch holds a checked
// announcement, and records them as seen (they were not given the
// transaction) and announcing.
func (s *sending) announcing(ms []*pool.Member) []*pool.Member {
	var out []*pool.Member
	for _, m := range ms {
		if w := s.watch(m.Addr()); w != nil {
			if sighting, _ := w.Result(); sighting != nil {
				out = append(out, m)
				s.mu.Lock()
				s.res.Announced[m.Addr()] = s.since(sighting)
				s.mu.Unlock()
			}
		}
	}
	return out
}

// awaitChecks waits for the checks of the watches of ms whose node
// announced the transaction (see peer.TxWatch), so that a false
// announcement heard before the send ends is known when it ends: a peer
// counted on its own connection's word whose watch then serves another
// transaction leaves Accepted and Seen (see lateSightings). A watch that
// heard nothing is not waited for. A check is bounded by askWait after
// its getdata was written (peer.CheckWithin), as an ask is: one not
// answered by then ends its watch, the peer not banned (silence proves
// no lie), and is recorded as unserved (see lateSightings), so that a
// peer that announces and never serves holds the send up by askWait at
// most, not the timeout.
func (s *sending) awaitChecks(ms []*pool.Member) {
	for _, m := range ms {
		w := s.watch(m.Addr())
		if w == nil || !w.Heard() {
			continue
		}
		<-w.Done()
		var pu *peer.UnservedAnnounceError
		if _, err := w.Result(); errors.As(err, &pu) {
			s.mu.Lock()
			s.unserved[m.Addr()] = &UnservedAnnounceError{Peer: m.Addr(), Txid: s.res.Txid, Within: pu.Within}
			s.mu.Unlock()
		}
	}
}

// UnservedAnnounceError is a peer whose announcement connection (see
// peer.TxWatch) announced the transaction Txid and did not serve it when
// asked within Within (askWait) after its getdata was written: the
// connection was closed, the announcement counts for nothing, and so
// does the peer (as after a notfound there). It proves no lie: the peer
// is not banned. It wraps peer.ErrFalseAnnouncement and peer.ErrStalled.
type UnservedAnnounceError struct {
	Peer   string
	Txid   chainhash.Hash
	Within time.Duration
}

func (e *UnservedAnnounceError) Error() string {
	return fmt.Sprintf("peer %s: %v: it announced transaction %v on its announcement connection and did not serve it within %v of being asked (%v; the connection was closed)",
		e.Peer, peer.ErrFalseAnnouncement, e.Txid, e.Within, peer.ErrStalled)
}

// Unwrap returns peer.ErrFalseAnnouncement and peer.ErrStalled.
func (e *UnservedAnnounceError) Unwrap() []error {
	return []error{peer.ErrFalseAnnouncement, peer.ErrStalled}
}

// lateSightings records the checked announcements that came after the
// peer was counted (or while nothing waited for them), bans the peers
// whose watch proved a lie or flooded (see watchBans), opened or while it
// opened (see failedToOpen), and returns the
// other faults of the watches that earn a ban, for the warnings. A peer
// whose watch announced the transaction falsely (see
// peer.FalseAnnounceError), or did not serve it within askWait (see
// awaitChecks), counts for nothing, whatever its own connection said:
// it leaves Accepted and Seen, and its false or unserved announcement
// is its failure.
func (s *sending) lateSightings(ms []*pool.Member) (faults []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.res
	for _, m := range ms {
		addr := m.Addr()
		w := s.watch(addr)
		if w == nil {
			if err := s.openFault(addr); err != nil {
				s.c.pool.Ban(m, err)
				faults = append(faults, err)
			}
			continue
		}
		sighting, err := w.Result()
		if watchBans(err) {
			s.c.pool.Ban(m, err)
		}
		switch {
		case sighting != nil:
			if _, ok := res.Announced[addr]; !ok {
				res.Announced[addr] = s.since(sighting)
			}
			if !slices.Contains(res.Given, addr) && !slices.Contains(res.Seen, addr) {
				res.Seen = append(res.Seen, addr)
			}
			if !slices.Contains(res.Accepted, addr) {
				res.Accepted = append(res.Accepted, addr)
				delete(res.Failed, addr)
			}
		case errors.Is(err, peer.ErrFalseAnnouncement) || s.unserved[addr] != nil:
			if u := s.unserved[addr]; u != nil {
				err = u
			}
			res.Accepted = slices.DeleteFunc(res.Accepted, func(a string) bool { return a == addr })
			res.Seen = slices.DeleteFunc(res.Seen, func(a string) bool { return a == addr })
			if !errors.Is(res.Failed[addr], peer.ErrFalseAnnouncement) {
				res.Failed[addr] = err
			}
		case watchBans(err):
			faults = append(faults, err)
		}
	}
	return faults
}

// since returns how long after the send began the announcement of
// sighting was checked.
func (s *sending) since(sighting *peer.Sighting) time.Duration {
	return sighting.At.Sub(s.start)
}

// watchBans reports whether err, a watch's, earns its peer a ban: a
// proof of a lie (another transaction served for the txid asked, a
// message that breaks the protocol) or a flood, as for the client's own
// connections (see Client.blame). A notfound after the announcement
// proves nothing: an honest node may have dropped the transaction
// meanwhile.
func watchBans(err error) bool {
	var fe *peer.FalseAnnounceError
	if errors.As(err, &fe) {
		return fe.Served != nil
	}
	return earnsBan(err)
}

// watchConfig is the configuration of a send's announcement
// connections, but for the address: the client's network, timeout, log
// and way of dialling (Client.dial, as the pool's connections).
func (c *Client) watchConfig() peer.Config {
	return peer.Config{Params: c.cfg.Params, Timeout: c.timeout(), Log: c.cfg.Log, Dial: c.dial}
}

// minedSearch is what findMined found: the block of the chain holding
// the transaction (conf), or, when only one peer's chain reaches the
// block that holds it, or not every live peer's does, a warning naming
// that block and the peers (alone).
type minedSearch struct {
	conf  *Confirmation
	alone string
}

// findMined searches the chain's last MinedSearchDepth blocks for tx by
// the scripts its outputs pay, and says where it is, if it is.
func (c *Client) findMined(ctx context.Context, tx *wire.MsgTx) minedSearch {
	watch := findable(tx)
	if len(watch) == 0 {
		return minedSearch{}
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	log := newScanLog()
	if _, err := c.syncHeaders(ctx, log); err != nil {
		return minedSearch{}
	}
	to := c.bestHeld(wire.SFNodeCF)
	if to < 0 {
		return minedSearch{}
	}
	req := ScanRequest{Watch: watch, From: max(0, to-MinedSearchDepth+1), To: to}
	res, err := c.scanBIP157(ctx, log, req, newWatchList(watch))
	if err != nil {
		var f *pool.Failure
		if errors.As(err, &f) {
			c.logf("looking for %v in the chain: %v", tx.TxHash(), err)
		}
		return minedSearch{}
	}
	for _, m := range res.Matches {
		if m.Txid != tx.TxHash() {
			continue
		}
		// A block only one peer's chain reaches is that peer's word.
		for _, o := range log.oneVoice {
			if o.From <= m.Height && m.Height <= o.To {
				return minedSearch{alone: fmt.Sprintf("block %v at %d holds %v, but only peer %s's chain reaches it: not taken as mined (a peer can mine a transaction in a block it shows nobody else); the send went on",
					m.BlockHash, m.Height, tx.TxHash(), o.Peer)}
			}
		}
		// So is one that some peers' chains reach and another's does
		// not: however many reach it, they may have mined it together.
		if reach, short := c.reachingSplit(m.Height); len(short) > 0 {
			return minedSearch{alone: fmt.Sprintf("block %v at %d holds %v, but only the chains of peers %s reach it, not those of %s: not taken as mined (peers can mine a transaction in a block they show nobody else, and how many show it buys no trust); the send went on",
				m.BlockHash, m.Height, tx.TxHash(), strings.Join(reach, ", "), strings.Join(short, ", "))}
		}
		return minedSearch{conf: &Confirmation{Height: m.Height, BlockHash: m.BlockHash}}
	}
	return minedSearch{}
}

// reachingSplit returns the addresses of the live peers whose chains
// reach height, and of those whose chains do not.
func (c *Client) reachingSplit(height int32) (reach, short []string) {
	for _, m := range c.pool.Serving(0) {
		if c.views.tip(m) >= height {
			reach = append(reach, m.Addr())
		} else {
			short = append(short, m.Addr())
		}
	}
	return reach, short
}
