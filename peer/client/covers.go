package client

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// Covers to a privacy target (Config.PrivacyTarget t). A peer that sees
// which blocks a client fetches attributes the scripts of a wallet by
// the blocks they tie together (the block-download attack, package
// privacy/leak). The client keeps cover scripts in DataDir/<network>/
// covers.dat (package peer/cover): scripts the chain itself carries,
// drawn as whole chains shaped like the wallet's own (leak.Need,
// leak.Draw: per class of groups, W_k/(W_k + C_k + chance_k) <= t, with
// chance_k the chance groups of the last scan's leak report, kept in the
// file), matched in the same filter pass as the watch list and fetched
// with its blocks in one shuffled, spread plan, so that no peer, nor all
// of them together, can tell the wallet's groups from the covers'. The
// same covers are used every session and never removed (an intersection of sessions would
// strip covers that change); new ones are drawn as the wallet grows.
//
// A wallet's scripts come in chains, which the attack sees as groups
// (leak.Profile): the client knows its chains, before it fetches, by
// the blocks its scripts share (the filters say so): a coin it
// received, spent beside the change it keeps, and that change spent in
// turn, never the payees it paid. A candidate chain is formed as one
// owner's, as a chain analyst reads ownership in the blocks a scan
// fetched (ownerChains): the scripts a transaction's inputs spend are
// one owner's (common-input ownership), and so is its change; a payee
// is apart, joined to an owner's chain only by a transaction of those
// blocks that spends it. The change is told without labels by the
// heuristics of chain analysis (Meiklejohn et al., IMC 2013, on change
// addresses; the script-type and round-amount rules among BlockSci's,
// Kalodner et al., USENIX Security 2020), in turn (changeOf): a
// transaction of one output pays no change; else the one output of a
// type every input may spend, the others of another type; else the
// one output whose amount is not a multiple of 1 mBTC, every other
// being one (a payee's amount is rounded, the change is what is left);
// else no rule decides, every reading is as likely to the analyst, and
// the output the transaction's hash picks is taken. A chain rides
// where each of its scripts' blocks holds another of it. Whether an
// input spends a script the filters do not say, so spent is left false
// for wallet and candidates alike; a peer reading the blocks it served
// sees it all the same (an input's signature script or witness names
// the script it spends), and on the covers' chain covers are spent
// there more often than the wallet's scripts: 0.61 [0.58, 0.64] of
// 1,149 covers against 0.50 [0.47, 0.53] of 1,280 watched scripts, AUC
// 0.445 [0.436, 0.453] (64 clients, TestCoverRidersLikeWallet), a tell
// as strong as the riders': a cover chain is an owner's coin spent and
// its change, found where the coin is spent, while a wallet's chains
// hold coins received and not yet spent. The choice among the chains
// drawn weighs it once their blocks are fetched (matchRiders, spentIn):
// AUC 0.444 to 0.447 without, 0.443 to 0.457 with (three runs each), as
// the reserve offers few chains of a coin not spent. A shape no chain has gives up the
// era, then the type and riding, then spent; failing that, a cover is
// drawn alone for the chain, with a warning: its group size can tell it
// apart.
//
// Candidates come from blocks that hold no watched script: the reserve,
// filled from the blocks each scan fetches (profiled on the held
// filters, so that the rare chains of several appearances are kept
// whatever block they came from). A scan whose covers fall short of the
// target draws what the reserve holds (samples of it, the chains of the
// short classes, and of one appearance above, first, drawn again while
// a draw leaves fewer short), then explores blocks for the next scan
// before it fetches the wallet's blocks: blocks chosen without the
// wallet and holding none of a cover in use, the wallet's swept as any
// other, with one block of each of the wallet's chains asked for the
// first time (covers_once.go); a few near candidates of several
// appearances, those one appearance above a class short first, then
// the next blocks of a sweep of the range keyed by the set's seed,
// resumed where the last scan stopped, whose candidates join the
// reserve; twice as many blocks after each
// scan short in a row (cover.Explore), the first scan of a run as many
// as the second (firstRound, covers_once.go), leaving room within the bound
// (MaxCoverBlocks) for the blocks of the chains still short that the
// reserve may still give (exploreRoom, covers_plan.go), and for
// those of the chains drawn unless the covers are short even with them
// and those settling turned down (the scan then fetches none of them),
// since a rare class may hide in a few blocks of thousands while
// exploring more than needed makes the covers' groups larger than the
// wallet's.
//
// The range. The covers' range starts a margin below the scan's first
// height (rangeMargin): 0 to maxCoverMargin (144) blocks, drawn once
// from the set's seed, so that it is the same every scan and session of
// the data directory and unknown to the peers (a fixed margin, or one
// given by the range, peers comparing scans would subtract). Its filters
// are matched for the covers alone, its blocks swept, drawn from and
// fetched for covers only, never scanned for the watch list. Without it
// no cover lies below the wallet's first block, and the lowest block a
// session fetches names the wallet's chain and its birth: on the
// TestCoversAcrossSessions fixture (a range of 300 blocks, 150 of other
// users' below it), the wallet's in 57 to 60 of 60 clients without the
// margin, 15 to 38 with it, a cover's in 15 to 26
// (TestCoversRequestShape, seven runs with, five without, and 18 later
// runs with). The cost there:
// the margin's filters, once a data directory (362 to 374 filters
// against 300, a quarter more; 1,294 to 1,334 filter headers against
// 1,214 to 1,224), about as many blocks (140 to 144 a client over every
// session against 139 to 142, TestCoversAcrossSessions), and more runs
// that meet the target after their 2nd session (3 to 14 of 60 against 0
// to 3, before a first scan explored the room it held idle, exploreRoom;
// 2 to 7 of 60 since, ten runs; see what remains, below). A margin of
// at most a day's blocks is a large share of that range, a small one of
// a wallet's of months:
// there the draw, which matches the era of a chain to a tenth of the
// range, rarely takes a cover from it.
//
// Order. The blocks explored are the only ones fetched before the
// plan is whole, and hold no script of any cover in use: a scan draws
// no chain found in them, nor one with a block among them
// (those wait in reserve for the next scan), and fetches the blocks of
// the wallet, of the covers in use and of the chains drawn in one
// shuffled order (spread.go), so that where a block comes in a peer's
// stream of requests says nothing of whose it is. The price: a scan
// whose reserve holds too few candidates (a new cover set's first)
// explores and stops short, and the next draws what it found.
//
// The chains drawn are added to the set only once their blocks are
// fetched, each settled against every block the scan fetches (the
// wallet's, those explored, every cover's) and those earlier scans
// fetched (which peers that keep what they were asked see with them):
// a chain whose group, as the attack forms it (the scripts of its
// transactions whose every appearance is fetched, and theirs in turn),
// grows past its size in the chain's own blocks is turned down, since a
// payment's other output spent in a block fetched for something else
// joins the cover's group, which its size then tells from the wallet's.
// Settling reads the blocks held: while planning, those explored (a
// chain turned down then is drawn again from the reserve); once the
// plan is fetched, every one. So each draw takes a margin of chains
// beyond the need (coverMargin), of each shape the chains found in
// transactions of a wallet's shape first (fewRiders), and of the chains
// that settle on the fetched blocks, those whose riders, group sizes
// and spending are least told from the wallet's scripts' of their
// class are kept (matchRiders, covers_riders.go), the rest left out,
// fetched once (they hide nothing of the wallet's, and dropping them
// marks only themselves). Chains turned down are taken back only where
// the covers are short without them (a warning says how many); still
// short, the scan says the target was not met and the next draws again.
// Covers short at the bound while planning, the scan stops with
// *PrivacyTargetError, none of the wallet's blocks fetched (but one of
// each of its chains among those explored, covers_once.go), its
// candidates and sweep kept for the next scan, unless
// Config.AllowShortCovers; once the sweep has given every block of the
// range to the scans short in a row of that range
// (cover.Explore.Explored), and they found nothing new, the error says
// the range holds too few candidates, and of which classes, rather than
// to scan again.
//
// Decoys. Some blocks are fetched for candidates that do not become
// covers: those of candidates of several appearances explored near
// (a candidate with every block fetched then), and those of chains drawn
// and then left out (turned down by settling, or drawn beyond the need),
// fetched once. Every script of such a chain matches because its blocks
// were fetched, which the attacker's null
// (the fetched set shifted) does not reproduce, so the leak report would
// count it as chance and give the wallet's scripts of its class less
// than the attack does. The client keeps those scripts as decoys in
// the cover file (cover.Set.AddDecoy, bounded, never dropped: the peers
// keep what they were asked), and the leak report leaves the groups
// holding one out of its chance count (leak.Input.Decoys, the rule in
// package privacy/leak), with the scripts in reserve of a cover's or a
// decoy's chain. The decoys the file holds are bounded
// (cover.MaxDecoys); once the bound leaves no room for those a scan
// would make, it makes none (decoyRoom): it does not explore near
// candidates, and keeps every chain it fetched as covers, those turned
// down included, with a warning (keepFetched), so that the report never
// counts a script fetched on purpose as chance.
//
// Profiles are read on the filters, whose false positives (one in
// M = 784,931 per script and block) raise a script's class above what
// the attack, reading the blocks fetched, sees: a wallet's script
// raised to a class no cover chain has would keep the wallet's scans
// short for good. So every block the client fetches (those explored,
// and the scan's own) is read for the matches of the wallet's scripts,
// of the covers in use and of the candidates profiled it shows false
// (blockScripts: neither paid nor named by an input, where no input
// that shows nothing could spend a script of its type), and the cover
// set keeps them (cover.Set.Refute), so that every later profile leaves
// them out.
//
// Across sessions, a cover drawn has a block an earlier scan explored;
// so exploring sweeps the wallet's blocks as any other and asks, once,
// for one block of each of the wallet's chains no peer was asked for
// before (covers_once.go): every chain of the wallet's then has a block
// asked in an earlier session, as a cover's. That block comes in the
// first session of a run short, so the draw takes first the chains
// found by then (onceTier), and the first scan of a run explores as
// the second would, so that those suffice more often.
//
// What remains: a peer that keeps every session sees the covers a
// class the chains found in the first session of a run lacked (a run
// meeting the target after its 2nd session, 2 to 7 of 60 on the
// fixture above with the range's margin, ten runs; 5 to 11 before the
// first scan explored the room it held idle (exploreRoom), each of them
// short in the 2nd of 1 to 3 chains of class 3) with their first block
// in a later one, the wallet's never; and the blocks
// asked before a chain, which the first round of a run leaves out for
// the wallet's chains it asks once (dropUnfound) and the draw matches
// (covers_asked.go), are matched only roughly: 1.06 to 1.08 a chain of
// the wallet's against 1.10 to 1.13 a cover's (privacy/README.md, known
// limits).
// Within a session that
// fetches its plan after exploring, the blocks explored, fetched
// first, are told from the rest by their order: a scan allowed short
// explores none of the wallet's, so scripts whose every block is among
// them are not the wallet's; a scan whose exploring refuted a match of
// the wallet's and then met the target has asked for some of the
// wallet's blocks before its plan, and none of the covers'.
// A cover's matches are never the wallet's: the watch list does not hold
// covers, and ScanResult.Cover counts their blocks and bytes apart.

// ErrCoversNeedDataDir: a privacy target without Config.DataDir. Covers
// drawn anew each run would be stripped by intersecting two sessions.
var ErrCoversNeedDataDir = errors.New("client: a privacy target needs a data directory (Config.DataDir) to keep its covers across sessions: covers drawn anew each run are stripped by intersecting two sessions")

// ErrPrivacyTarget: a privacy target outside [0, 1).
var ErrPrivacyTarget = errors.New("client: a privacy target must be in (0, 1), or 0 for none")

// checkPrivacyTarget checks a Config's target against its data directory.
func checkPrivacyTarget(cfg Config) error {
	t := cfg.PrivacyTarget
	if t == 0 {
		return nil
	}
	if !(t > 0 && t < 1) {
		return fmt.Errorf("%w: %g", ErrPrivacyTarget, t)
	}
	if cfg.DataDir == "" {
		return ErrCoversNeedDataDir
	}
	return nil
}

// coverSet opens the cover file on first use. Called with opMu held.
func (c *Client) coverSet() (*cover.Set, error) {
	if c.covers != nil {
		return c.covers, nil
	}
	if c.st == nil {
		return nil, ErrCoversNeedDataDir
	}
	// A missing file beside one set aside as damaged was not a first
	// run: a refused scan set it aside.
	aside, _ := filepath.Glob(filepath.Join(c.st.Dir(), cover.FileName+".damaged-*"))
	s, notes, err := cover.OpenWith(c.st.Dir(), c.cfg.Params, cover.Options{Existing: len(aside) > 0, New: c.cfg.NewCovers})
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	c.notes = append(c.notes, notes...)
	c.covers = s
	return s, nil
}

// Bounds of a scan's cover work.
const (
	maxProbes     = 512 // candidates profiled in one scan
	maxNewReserve = 256 // candidates of one appearance a scan adds to the reserve
	// maxFreshCandidates bounds the candidates of a scan's blocks
	// profiled at its end.
	maxFreshCandidates = 4096
	minExploreBlocks   = 8 // blocks of a round of exploring, and wallet blocks the default bound counts, at least
	coverHotFactor     = 2 // a cover of more appearances than this × the wallet's largest class (or 16) is hot
	exploreFactor      = 4 // blocks explored per cover chain short at first, within MaxCoverBlocks
	maxEscalation      = 8 // doublings of the blocks explored, at most
)

// coverScan is one scan pass's covers.
type coverScan struct {
	c        *Client
	target   float64
	set      *cover.Set
	from, to int32
	// walletFrom is the wallet's first height: the covers' range, from
	// on, starts a margin below it (rangeMargin), where no block is
	// the wallet's.
	walletFrom int32
	wallet     [][]byte // the watch list's scripts
	covers     [][]byte // in use at the start of the scan
	// seen holds the heights on the held filters of each candidate
	// profiled in the scan, at most hot+1 of them (more: hot): the held
	// filters of the range do not change during a scan, so a candidate
	// sampled again in a later round, or found again, is not tested
	// again.
	seen map[string][]int32
	// spots are the range's heights in the sweep's order, made once.
	spots []sweepSpot
	// nextGroup is the group of the next candidate chain found;
	// onceEpoch, where onceKnown, the last epoch of chains found by a
	// scan that asked for the wallet's blocks once (covers_once.go).
	nextGroup uint64
	onceEpoch uint64
	onceKnown bool
	// explored are the heights fetched before the wallet's blocks, only
	// to find candidates, never a block of the wallet's or of a cover in
	// use (labelled); exploredAt holds them, and foundNow the
	// candidates found in them, with their classes: no chain found in
	// them, or with a block among them, is drawn by the scan
	// (drawRound), so that the blocks fetched first hold no script of
	// the wallet's nor of a cover.
	explored   []int32
	exploredAt map[int32]bool
	foundNow   map[string]uint8
	labelled   map[int32]bool
	// hits holds, per height of the range whose filter is held, which of
	// wallet and covers (in that order) it matches.
	hits     map[int32][]bool
	walletAt map[int32]bool // heights fetched for the watch list
	drawn    int
	why      []string // why the target is not met
	warnings []string
	// spanShort is how many of the wallet's spanChains chains no
	// candidate chain of their shape lay like in the scan's last draw
	// (spanLike).
	spanShort, spanChains int
	spare                 []cover.Cover // candidates profiled and not drawn
	// near are the heights of candidates profiled above class 1 and not
	// drawn: blocks the other transactions of their owners' chains are
	// in, which exploring fetches before the sweep's.
	near []int32
	hot  int // appearances above which a script is hot
	// short counts the cover chains short of the target after the
	// rounds of exploring; swept is the sweep's place they reached
	// (nil: none).
	short int
	swept *uint64
	// sweptNow counts the heights the sweep gave the scan.
	sweptNow int
	// rangeDone is set once exploring has taken every block of the
	// range, in this scan or over the scans short in a row before it.
	rangeDone bool
	// shortClasses are the classes of the cover chains short.
	shortClasses []int
	// hashOf gives the hash of the block at a height (the client's
	// chain's, unless set).
	hashOf func(int32) chainhash.Hash
	// blocksAt gives the blocks at heights exploring fetches (the
	// client's peers', unless set).
	blocksAt func([]int32) []*wire.MsgBlock
	// walletHeights are the heights of each of the wallet's scripts on
	// the held filters, walletProf their profiles (walletProfiles) and
	// largest their largest class; inUse the covers in use matched in
	// the range.
	walletHeights [][]int32
	walletProf    []leak.Profile
	largest       int
	inUse         []member
	// log holds the blocks the scan fetched (nil: none).
	log *scanLog
	// pending are the cover chains drawn and not yet added to the set:
	// planning adds them (cover.Set.Add) only once the plan is whole,
	// so that each is checked against every block the scan fetches
	// (settle). skip holds the scripts of pending chains and of those
	// settle turned down, which no later round draws again.
	pending []pendingChain
	skip    map[string]bool
	// grown counts the chains settle turned down, turned holds them,
	// and readmitted counts those taken back (readmit).
	grown      int
	turned     []pendingChain
	readmitted int
	// unfit holds the chains drawn that settle left out for the bound
	// (their blocks lie beyond it): the covers short with them counted
	// are those the reserve could not give (closePlan).
	unfit []pendingChain
	// bounded is the scan's bound (bound), inUseHeights the heights
	// of the covers in use, kept by plan for the settling of the
	// pending chains on the blocks fetched (settleFetched).
	bounded      int
	inUseHeights [][]int32
	// before holds the heights of the range any peer was asked for
	// before the scan (the ledger's, of earlier scans and sessions):
	// peers that keep what they were asked see them with the plan's.
	before map[int32]bool
	// decoysLost is set once a decoy could not be kept (addDecoy).
	decoysLost bool
	// onceAsked is set once exploring has asked for the wallet's
	// chains' blocks asked for the first time (walletOnce).
	onceAsked bool
	// onceFetched counts the heights walletOnce gave exploring, and
	// walletExplored the wallet's heights exploring fetched.
	onceFetched    int
	walletExplored map[int32]bool
}

// pendingChain is a cover chain drawn and not yet added: its covers
// and, for each, its heights.
type pendingChain struct {
	covers  []cover.Cover
	members []member
}

// hash is the hash of the block at height h.
func (cs *coverScan) hash(h int32) chainhash.Hash {
	if cs.hashOf != nil {
		return cs.hashOf(h)
	}
	return cs.c.chain.Hash(h)
}

// maxCoverMargin bounds the margin below a scan's range that its covers
// are drawn from and explored in (rangeMargin).
const maxCoverMargin int32 = 144

// rangeMargin is how many blocks below a scan's first height its covers
// range over: drawn once, from the set's seed, uniformly in
// 0..maxCoverMargin, so that it is the same every scan and session of
// the data directory (a margin that changed, as one fixed or given by
// the birth, would let peers that compare sessions subtract it) and
// unknown to the peers. Without it no cover lies below the wallet's
// first block, and the lowest block fetched is the wallet's.
func rangeMargin(set *cover.Set) int32 {
	seed := set.Seed()
	sum := sha256.Sum256(append(seed[:], "margin"...))
	return int32(binary.BigEndian.Uint64(sum[:8]) % uint64(maxCoverMargin+1))
}

// startCovers opens the cover set for a scan of the wallet's from..to:
// the covers range over from-rangeMargin..to (never below 0), the
// wallet over from..to only.
func (c *Client) startCovers(wallet [][]byte, from, to int32) (*coverScan, error) {
	set, err := c.coverSet()
	if err != nil {
		return nil, err
	}
	lo := max(from-rangeMargin(set), 0)
	cs := &coverScan{c: c, target: c.cfg.PrivacyTarget, set: set, from: lo, walletFrom: from, to: to, wallet: wallet, covers: set.Scripts(), seen: map[string][]int32{}}
	var groups []uint64
	for _, c := range slices.Concat(set.Covers(), set.Reserve()) {
		groups = append(groups, c.Profile.Group)
	}
	cs.nextEpoch(groups)
	return cs, nil
}

// sampleChains returns whole candidate chains of reserve (by Group; a
// script of group 0 alone), in random order, up to n scripts: every
// chain of the reserve has its chance at each scan, not only the first
// n scripts ever found. Chains holding a script of a class in want (as
// last profiled) go first, within n: the classes the covers are short
// of. Then those profiled above class 1 (cover.Set.Reclass), within
// half of n: they are the rare ones a wallet's chains of several
// appearances need, and a uniform sample of a large reserve leaves them
// out as often as not.
func sampleChains(reserve []cover.Cover, n int, want map[uint8]bool) []cover.Cover {
	var chains [][]cover.Cover
	at := map[uint64]int{}
	for _, r := range reserve {
		i, ok := at[r.Profile.Group]
		if !ok || r.Profile.Group == 0 {
			i = len(chains)
			at[r.Profile.Group] = i
			chains = append(chains, nil)
		}
		chains[i] = append(chains[i], r)
	}
	rare := func(ch []cover.Cover) bool {
		return slices.ContainsFunc(ch, func(c cover.Cover) bool { return c.Profile.Class > 1 })
	}
	var out []cover.Cover
	taken := make([]bool, len(chains))
	order := rand.Perm(len(chains))
	for _, i := range order {
		wanted := slices.ContainsFunc(chains[i], func(c cover.Cover) bool { return want[c.Profile.Class] })
		if wanted && len(out)+len(chains[i]) <= n {
			out, taken[i] = append(out, chains[i]...), true
		}
	}
	for _, i := range order {
		if !taken[i] && rare(chains[i]) && len(out)+len(chains[i]) <= n/2 {
			out, taken[i] = append(out, chains[i]...), true
		}
	}
	for _, i := range order {
		if !taken[i] && len(out)+len(chains[i]) <= n {
			out = append(out, chains[i]...)
		}
	}
	return out
}

// candidates returns up to n scripts of blocks fit to be covers: of a
// standard type, in a transaction that pays no watched script, not a
// cover or candidate already; in chains (Profile.Group, new groups)
// formed as a wallet's are, by owner (ownerChains): the coins a
// transaction spends and its change together, its payees apart.
func (cs *coverScan) candidates(blocks []*wire.MsgBlock, n int) []cover.Cover {
	wallet := make(map[string]bool, len(cs.wallet))
	for _, s := range cs.wallet {
		wallet[string(s)] = true
	}
	had := map[string]bool{}
	for _, s := range cs.set.Scripts() {
		had[string(s)] = true
	}
	for _, c := range cs.set.Reserve() {
		had[string(c.Script)] = true
	}
	var txs []*wire.MsgTx
	var blockOf []*wire.MsgBlock
	for _, b := range blocks {
		for _, tx := range b.Transactions[1:] {
			if !slices.ContainsFunc(tx.TxOut, func(o *wire.TxOut) bool { return wallet[string(o.PkScript)] }) {
				txs = append(txs, tx)
				blockOf = append(blockOf, b)
			}
		}
	}
	chain := ownerChains(txs)
	group := map[int]uint64{}
	var out []cover.Cover
	for i, tx := range txs {
		// The scripts it pays, and those its inputs show they spend
		// (a false one matches no filter and is never drawn).
		scripts := make([][]byte, 0, len(tx.TxOut)+len(tx.TxIn))
		for _, o := range tx.TxOut {
			scripts = append(scripts, o.PkScript)
		}
		for _, in := range tx.TxIn {
			_, spent := gcs.SpendCandidates(in)
			scripts = append(scripts, spent...)
		}
		for _, s := range scripts {
			if len(out) >= n {
				return out
			}
			if leak.TypeOf(s) == leak.TypeOther || had[string(s)] || wallet[string(s)] {
				continue
			}
			had[string(s)] = true
			g, ok := group[chain[string(s)]]
			if !ok {
				g = cs.nextGroup
				cs.nextGroup++
				group[chain[string(s)]] = g
			}
			// Its riders in the block it was found in.
			mates := min(len(blockMates(blockOf[i], s)), math.MaxUint32)
			out = append(out, cover.Cover{Script: s, Profile: cover.Profile{Class: 1, Type: uint8(leak.TypeOf(s)), Drawn: cs.to, Group: g,
				Riders: uint32(mates), Read: 1}})
		}
	}
	return out
}

// profile tests every held filter of the range against elems
// (gcs.Filter.MatchEach), which gives each its heights (at), and which
// of them each held filter matches (hits, if keep), leaving out the
// matches the cover set keeps as false (cover.Set.Refuted).
func (cs *coverScan) profile(elems [][]byte, keep bool) (at [][]int32, hits map[int32][]bool) {
	hits = map[int32][]bool{}
	at = make([][]int32, len(elems))
	if len(elems) == 0 {
		return at, hits
	}
	var m []bool
	for h := cs.from; h <= cs.to; h++ {
		hash := cs.c.chain.Hash(h)
		data, ok := cs.c.cachedFilter(hash)
		if !ok {
			continue
		}
		f, err := gcs.FromNBytes(gcs.BasicP, gcs.BasicM, data)
		if err != nil {
			continue
		}
		if keep {
			m = nil
		}
		m = f.MatchEach(gcs.BasicKey(&hash), elems, m)
		for i, ok := range m {
			if ok && cs.set.Refuted(cover.MatchKeyOf(hash, elems[i])) {
				m[i] = false // a false match a block fetched showed
			}
		}
		if keep {
			hits[h] = m
		}
		for i, ok := range m {
			if ok {
				at[i] = append(at[i], h)
			}
		}
	}
	return at, hits
}

// profileCandidates returns the heights on the held filters of each of
// scripts, candidates, at most hot+1 of them (more: hot), testing the
// filters only against those the scan has not profiled yet (seen).
func (cs *coverScan) profileCandidates(scripts [][]byte) [][]int32 {
	if cs.seen == nil {
		cs.seen = map[string][]int32{}
	}
	var fresh [][]byte
	pending := map[string]bool{}
	for _, s := range scripts {
		if _, ok := cs.seen[string(s)]; !ok && !pending[string(s)] {
			pending[string(s)] = true
			fresh = append(fresh, s)
		}
	}
	at, _ := cs.profile(fresh, false)
	for i, s := range fresh {
		hs := at[i]
		if len(hs) > cs.hot+1 {
			hs = slices.Clip(hs[:cs.hot+1])
		}
		cs.seen[string(s)] = hs
	}
	out := make([][]int32, len(scripts))
	for i, s := range scripts {
		out[i] = cs.seen[string(s)]
	}
	return out
}

// member is a script profiled on the range's filters: its heights and
// its chain (0: alone).
type member struct {
	script  []byte
	heights []int32
	group   uint64
}

// profiles are the profiles of ms, each with its chain (leak.Profile's
// Group and Chain) and riding where each of its heights holds another
// member of its chain. Spent is left false for every script alike: the
// filters do not say whether an input spends a script (the blocks do:
// see the covers' doc above, and matchRiders).
func (cs *coverScan) profiles(ms []member) []leak.Profile {
	at := map[uint64]map[int32]int{} // per chain, members per height
	for _, m := range ms {
		if m.group == 0 {
			continue
		}
		if at[m.group] == nil {
			at[m.group] = map[int32]int{}
		}
		for _, h := range m.heights {
			at[m.group][h]++
		}
	}
	ids := map[uint64]int{}
	out := make([]leak.Profile, len(ms))
	for i, m := range ms {
		p := leak.ProfileOf(m.script, leak.Match{Appearances: uint64(len(m.heights)), Heights: m.heights}, false, cs.from, cs.to)
		if m.group != 0 {
			if ids[m.group] == 0 {
				ids[m.group] = len(ids) + 1
			}
			p.Group = ids[m.group]
			p.Riding = !slices.ContainsFunc(m.heights, func(h int32) bool { return at[m.group][h] < 2 })
		}
		out[i] = p
	}
	_, out = leak.Shapes(out)
	return out
}

// walletChains gives each of ms, the wallet's scripts, the chain of
// the scripts it shares a block with, directly or through others.
func walletChains(ms []member) {
	u := newUnions(len(ms))
	first := map[int32]int{}
	for i, m := range ms {
		for _, h := range m.heights {
			if j, ok := first[h]; ok {
				u.join(i, j)
			} else {
				first[h] = i
			}
		}
	}
	for i := range ms {
		ms[i].group = uint64(u.find(i)) + 1
	}
}

// walletProfiles are the profiles of the wallet's scripts matched in
// the range (at: each one's heights on the held filters), in chains
// (walletChains), without the matches the cover set keeps as false
// (cover.Set.Refuted: a block fetched showed the filter's match a false
// positive, which the attack, reading the blocks, does not count), and
// the largest class among them.
func (cs *coverScan) walletProfiles(at [][]int32) (profiles []leak.Profile, largest int) {
	var wallet []member
	for i, s := range cs.wallet {
		hs := slices.DeleteFunc(slices.Clone(at[i]), func(h int32) bool {
			return cs.set.Refuted(cover.MatchKeyOf(cs.hash(h), s))
		})
		if len(hs) > 0 {
			wallet = append(wallet, member{script: s, heights: hs})
			largest = max(largest, min(len(hs), leak.MaxProfileClass))
		}
	}
	walletChains(wallet)
	return cs.profiles(wallet), largest
}

// refute keeps in the cover set, as false, each match on the filter of
// a block of blocks (at heights) that the block shows false
// (blockScripts): of a wallet's script, of a cover in use, and of a
// candidate the scan profiled (seen, whose heights it leaves out); it
// returns how many of the wallet's it kept. A false positive raises a
// script's class above what the attack, reading the blocks, sees: a
// wallet's, to a class no cover may have (the scan would then stay
// short of covers for good), a candidate's, out of the class it could
// cover, a cover's, out of the class it was drawn for.
func (cs *coverScan) refute(heights []int32, blocks []*wire.MsgBlock) (wallet int) {
	for i, h := range heights {
		if i >= len(blocks) || blocks[i] == nil {
			continue
		}
		held, unsure := blockScripts(blocks[i])
		absent := func(s []byte) bool { return !held[string(s)] && !unsure[leak.TypeOf(s)] }
		hash := cs.hash(h)
		if m := cs.hits[h]; m != nil {
			for j, s := range cs.wallet {
				if m[j] && absent(s) && cs.keepFalse(hash, h, s) {
					wallet++
				}
			}
			// The covers in use: a false match would keep a cover in a
			// class above the attack's, and its class short, every
			// scan after.
			for j, s := range cs.covers {
				if nw := len(cs.wallet); nw+j < len(m) && m[nw+j] && absent(s) {
					cs.keepFalse(hash, h, s)
				}
			}
		}
		for s, hs := range cs.seen {
			if slices.Contains(hs, h) && absent([]byte(s)) && cs.keepFalse(hash, h, []byte(s)) {
				cs.seen[s] = slices.DeleteFunc(slices.Clone(hs), func(x int32) bool { return x == h })
			}
		}
	}
	return wallet
}

// keepFalse keeps script's match in the block hash (at h) as false,
// unless kept already; it reports whether it kept it.
func (cs *coverScan) keepFalse(hash chainhash.Hash, h int32, script []byte) bool {
	k := cover.MatchKeyOf(hash, script)
	if cs.set.Refuted(k) {
		return false
	}
	if err := cs.set.Refute(k); err != nil {
		cs.warnings = append(cs.warnings, fmt.Sprintf("a false match at height %d was not kept (%v): the next scans count it", h, err))
		return false
	}
	return true
}

// blockScripts returns the scripts block holds as a basic filter holds
// them: those its outputs pay and those its inputs show they spend
// (gcs.SpendCandidates), and the script types an input may spend
// unseen (unseenTypes): a script of those types the block does not name
// may still be in its filter.
func blockScripts(block *wire.MsgBlock) (held map[string]bool, unsure map[leak.ScriptType]bool) {
	held, unsure = map[string]bool{}, map[leak.ScriptType]bool{}
	for i, tx := range block.Transactions {
		for _, o := range tx.TxOut {
			held[string(o.PkScript)] = true
		}
		if i == 0 {
			continue // a coinbase spends nothing
		}
		for _, in := range tx.TxIn {
			typ, cands := gcs.SpendCandidates(in)
			for _, t := range unseenTypes[typ] {
				unsure[t] = true
			}
			for _, c := range cands {
				held[string(c)] = true
			}
		}
	}
	return held, unsure
}

// unseenTypes are, per input type that shows nothing of the script it
// spends (not gcs.InputType.Reveals), the script types consensus lets
// it spend: an empty input, outputs anyone can spend; one with a
// signature script not push-only, a legacy P2PKH (push-only is a
// policy there, a rule only for P2SH); one ending in a signature-shaped
// push, a P2SH whose redeem script begins with that byte; a witness of
// one item, a P2TR by its key or a P2WSH whose witness script is the
// item. A script of another type that an input spends, it names.
var unseenTypes = map[gcs.InputType][]leak.ScriptType{
	gcs.InputHidden:      {leak.TypeOther},
	gcs.InputNonStandard: {leak.TypeOther, leak.TypeP2PKH},
	gcs.InputSignature:   {leak.TypeOther, leak.TypeP2SH},
	gcs.InputP2TRKeyPath: {leak.TypeOther, leak.TypeP2TR, leak.TypeP2WSH},
}

// profileRange profiles the wallet and the covers in use on the held
// filters of the range, finds the wallet's blocks among matched (the
// filter pass's; forced are the wallet's whatever the filters say),
// and labels the covers' blocks, which exploring never fetches. It
// returns the heights of each cover in use.
func (cs *coverScan) profileRange(matched []int32, forced map[int32]bool) [][]int32 {
	var at [][]int32
	at, cs.hits = cs.profile(slices.Concat(cs.wallet, cs.covers), true)
	nw, nc := len(cs.wallet), len(cs.covers)
	// Below the wallet's first height, the margin holds covers only.
	for h, m := range cs.hits {
		if h < cs.walletFrom {
			clear(m[:nw])
		}
	}
	for i := range nw {
		at[i] = slices.DeleteFunc(at[i], func(h int32) bool { return h < cs.walletFrom })
	}
	cs.walletHeights = at[:nw]
	cs.reprofileWallet()
	cs.walletAt = map[int32]bool{}
	for _, h := range matched {
		if h < cs.walletFrom {
			continue
		}
		m := cs.hits[h]
		// Unknown filters, and matches of neither (the matcher's false
		// positives), count as the wallet's.
		if m == nil || forced[h] || slices.Contains(m[:nw], true) || !slices.Contains(m[nw:nw+nc], true) {
			cs.walletAt[h] = true
		}
	}
	cs.hot = max(coverHotFactor*cs.largest, 16)
	coverHeights := cs.useCovers(at[nw:])
	// Exploring never fetches a block of a cover in use: those go in
	// the plan's one shuffled order. The wallet's blocks it sweeps as
	// any other (covers_once.go): left out, they would be the blocks no
	// session asked for before the one that fetches them, where a
	// cover's are swept.
	cs.labelled = map[int32]bool{}
	if cs.c != nil && cs.c.cfg.AllowShortCovers {
		// A scan allowed short fetches the wallet's blocks in its plan
		// this session: none is fetched before it.
		cs.labelled = maps.Clone(cs.walletAt)
	}
	for _, hs := range coverHeights {
		for _, h := range hs {
			cs.labelled[h] = true
		}
	}
	return coverHeights
}

// askedBefore returns the heights of the range the ledger says some
// peer was asked for (the client's, unless no client: none).
func (cs *coverScan) askedBefore() map[int32]bool {
	out := map[int32]bool{}
	if cs.c == nil || cs.c.ledger == nil {
		return out
	}
	for _, v := range cs.c.ledger.views(cs.c.chain) {
		for _, h := range v.fetched {
			if h >= cs.from && h <= cs.to {
				out[h] = true
			}
		}
	}
	return out
}

// reprofileWallet reads the wallet's profiles (walletProfiles) from
// its heights on the held filters, as the cover set keeps its false
// matches now.
func (cs *coverScan) reprofileWallet() {
	cs.walletProf, cs.largest = cs.walletProfiles(cs.walletHeights)
}

// useCovers notes the covers in use, whose heights on the held filters
// are at, those matched in the range as members (inUse), warns of
// those turned hot, and returns their heights.
func (cs *coverScan) useCovers(at [][]int32) [][]int32 {
	coverHeights := make([][]int32, 0, len(at))
	for i, c := range cs.set.Covers() {
		hs := at[i]
		coverHeights = append(coverHeights, hs)
		if len(hs) > 0 {
			cs.inUse = append(cs.inUse, member{script: c.Script, heights: hs, group: c.Profile.Group})
			if _, ok := cs.seen[string(c.Script)]; !ok && cs.seen != nil {
				cs.seen[string(c.Script)] = slices.Clip(hs[:min(len(hs), cs.hot+1)])
			}
		}
		if len(hs) > cs.hot {
			cs.warnings = append(cs.warnings, fmt.Sprintf("cover %x turned hot: it appears in %d blocks of the range, each fetched every scan (kept: dropping a cover marks it to anyone intersecting sessions)", c.Script, len(hs)))
		}
	}
	return coverHeights
}

// need is how many more cover chains of each shape the wallet's chains
// need beside the covers in use and those pending (leak.Need).
func (cs *coverScan) need() map[leak.Profile]int {
	return cs.needOf(cs.pending)
}

// needWith is need were the chains of extra pending too, after the
// pending ones.
func (cs *coverScan) needWith(extra []pendingChain) map[leak.Profile]int {
	return cs.needOf(slices.Concat(cs.pending, extra))
}

// needOf is how many more cover chains of each shape the wallet's
// chains need beside the covers in use and chains, in their order
// (leak.Need): need for a choice of chains that changes no state of the
// scan (the pending chains stay as they are).
func (cs *coverScan) needOf(chains []pendingChain) map[leak.Profile]int {
	return leak.Need(cs.walletProf, cs.profiles(slices.Concat(cs.inUse, membersOf(chains))), cs.set.Chance(), cs.target)
}

// warnDrawn says what the draw of the scan left a peer to see: chains
// turned down or taken back.
func (cs *coverScan) warnDrawn() {
	if cs.grown > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("%s drawn this scan turned down: their groups grew through the plan's other blocks beyond the chains' own, which would have told them from the wallet's", nounCount(cs.grown, "cover chain")))
	}
	if cs.readmitted > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("%s whose groups grow through the plan's other blocks kept all the same: the bound left no room for others, and their groups' size can tell them from the wallet's", nounCount(cs.readmitted, "cover chain")))
	}
	if cs.spanShort > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("%d of the wallet's %d chains had no candidate chain of their shape lying like them (as many blocks, span and mean height within %.0f%% of the range): their covers fall short in span, which a peer keeping what it was asked can tell them by", cs.spanShort, cs.spanChains, spanTolerance*100))
	}
}

// took keeps what blocks fetched before the wallet's (at heights hs)
// show: the false matches they refute (refute) and their candidates,
// which join the reserve for the next round's sample and the next
// scan's. It reports whether a match of the wallet's was refuted, whose
// profile the attack then sees without it.
func (cs *coverScan) took(hs []int32, blocks []*wire.MsgBlock) (walletRefuted bool) {
	cs.explored = append(cs.explored, hs...)
	if cs.exploredAt == nil {
		cs.exploredAt = map[int32]bool{}
	}
	for _, h := range hs {
		cs.exploredAt[h] = true
	}
	walletRefuted = cs.refute(hs, blocks) > 0
	for _, c := range cs.fresh(blocks, maxNewReserve) {
		if err := cs.set.AddReserve(c); errors.Is(err, cover.ErrFull) {
			break
		}
		cs.foundNow[string(c.Script)] = c.Profile.Class
	}
	return walletRefuted
}

// foundFor counts the candidates found now that could mend what short
// lacks: those of a class short, or one above it (wantedClasses), whose
// extra match a block explored may show false. A candidate of another
// class fills no chain short (a draw relaxes every part of a shape but
// its class), and a lapped sweep finds again, each lap, the candidates
// seen once that no round had room to keep (maxNewReserve): counted,
// they would keep a range that holds too few candidates of the classes
// short from ever being said explored (RangeExplored).
func (cs *coverScan) foundFor(short map[leak.Profile]int) int {
	want := wantedClasses(short)
	n := 0
	for _, k := range cs.foundNow {
		if want[k] {
			n++
		}
	}
	return n
}

// scripts are the scripts of the covers in use and of the pending
// chains: those whose blocks the scan's fetch plan spreads over the
// peers as it spreads the wallet's.
func (cs *coverScan) scripts() [][]byte {
	out := cs.set.Scripts()
	for _, m := range cs.pendingMembers() {
		out = append(out, m.script)
	}
	return out
}

// pendingMembers are the members of the pending chains.
func (cs *coverScan) pendingMembers() []member {
	return membersOf(cs.pending)
}

// membersOf are the members of chains, in their order.
func membersOf(chains []pendingChain) []member {
	var out []member
	for _, ch := range chains {
		out = append(out, ch.members...)
	}
	return out
}

// withPending is inUse, the heights of the covers in use, with those
// of the pending chains' members after them.
func (cs *coverScan) withPending(inUse [][]int32) [][]int32 {
	out := slices.Clone(inUse)
	for _, m := range cs.pendingMembers() {
		out = append(out, m.heights)
	}
	return out
}

// settle checks the pending chains against the whole plan: the
// wallet's blocks, those explored and every cover's within the bound
// (heights). The attack groups a chain's scripts with the scripts of
// their transactions whose every appearance was fetched, and theirs in
// turn (package privacy/leak, Groups): a chain drawn to a wallet's
// chain's size grows past it when a script beside it (a payment's
// other output) is spent in a block fetched for something else, the
// wallet's, another cover's or one explored. settle fetches nothing:
// a chain's blocks are fetched with the wallet's, in one shuffled
// order, so it reads the group each chain would have in the plan and
// in its own blocks alone (groupSizes) on the blocks held, those
// explored before the plan and, once the plan is fetched (finish),
// every one; it turns down each chain whose group grows in the plan,
// or whose blocks the bound leaves out: its scripts stay in reserve,
// and no later round of the scan draws them again.
func (cs *coverScan) settle(bound int, inUse [][]int32) {
	if len(cs.pending) == 0 {
		return
	}
	planned, seen := cs.planSeen(bound, inUse)
	chains := make([][]member, len(cs.pending))
	in := make([]map[int32]bool, 0, 2*len(cs.pending))
	fits := make([]bool, len(cs.pending))
	for i, ch := range cs.pending {
		chains[i] = ch.members
		fits[i] = true
		for _, m := range ch.members {
			fits[i] = fits[i] && !slices.ContainsFunc(m.heights, outside(planned))
		}
		in = append(in, seen)
	}
	for _, ch := range cs.pending {
		own := map[int32]bool{}
		for _, m := range ch.members {
			for _, h := range m.heights {
				own[h] = true
			}
		}
		in = append(in, own)
	}
	sizes := cs.groupSizes(slices.Concat(chains, chains), in)
	n := len(cs.pending)
	kept := cs.pending[:0]
	for i, ch := range cs.pending {
		if fits[i] && sizes[i] <= sizes[n+i] {
			kept = append(kept, ch)
			continue
		}
		if fits[i] {
			cs.grown++
			cs.turned = append(cs.turned, ch)
		} else {
			cs.unfit = append(cs.unfit, ch)
		}
	}
	cs.pending = kept
}

// planSeen returns the heights of the plan within bound, with the
// covers in use at inUse and the pending chains, and those the peers
// see with them: the plan's and those of earlier scans (before), which
// peers that keep what they were asked hold too.
func (cs *coverScan) planSeen(bound int, inUse [][]int32) (planned, seen map[int32]bool) {
	hs, _ := cs.heights(bound, cs.withPending(inUse))
	planned = make(map[int32]bool, len(hs))
	for _, h := range hs {
		planned[h] = true
	}
	seen = maps.Clone(planned)
	maps.Copy(seen, cs.before)
	return planned, seen
}

// readmit takes back, one at a time, the chains settle turned down
// (their blocks are fetched already) while needWith, after the last
// round, still finds the covers short with those taken back, and
// returns what it finds then: a chain whose group grows tells itself
// apart by its size, but a wallet's chains short of covers are exposed
// whole. A chain is taken back only where it leaves fewer chains short.
// needWith weighs the need with chains taken back: coverScan.needWith,
// which changes no pending chain (a test's own in tests).
func (cs *coverScan) readmit(needWith func(extra []pendingChain) map[leak.Profile]int) map[leak.Profile]int {
	short := needWith(nil)
	var back []pendingChain
	for _, i := range rand.Perm(len(cs.turned)) {
		if len(short) == 0 {
			break
		}
		with := append(slices.Clip(back), cs.turned[i])
		if after := needWith(with); chainsShort(after) < chainsShort(short) {
			short, back = after, with
		}
	}
	cs.pending = append(cs.pending, back...)
	cs.readmitted += len(back)
	cs.turned = nil
	return short
}

// chainsShort is the chains short of need.
func chainsShort(need map[leak.Profile]int) int {
	n := 0
	for _, k := range need {
		n += k
	}
	return n
}

// maxRedraws bounds the draws of a round of planning (drawSettled).
const maxRedraws = 8

// maxGroupDepth bounds the steps groupSizes follows a group's scripts
// through their transactions.
const maxGroupDepth = 6

// groupSizes is, for each chain of chains, the group the attack would
// put its scripts in were the blocks of in[i] fetched (package
// privacy/leak, Groups): its scripts, and in turn every script of a
// transaction of the group, in a block held, whose heights on the held
// filters all lie in in[i] (a script of more than hot appearances is
// left out, as its blocks are seldom all fetched). A block not held
// (a wallet's) adds nothing, in the plan and in the chain's own blocks
// alike.
func (cs *coverScan) groupSizes(chains [][]member, in []map[int32]bool) []int {
	group := make([]map[string]bool, len(chains))
	frontier := make([][][]byte, len(chains))
	// A member's heights are its own (a wallet's script is not
	// profiled as a candidate), a mate's those profiled.
	own := map[string][]int32{}
	for i, ch := range chains {
		group[i] = map[string]bool{}
		for _, m := range ch {
			group[i][string(m.script)] = true
			frontier[i] = append(frontier[i], m.script)
			own[string(m.script)] = m.heights
		}
	}
	heightsOf := func(s []byte) []int32 {
		if hs, ok := own[string(s)]; ok {
			return hs
		}
		return cs.seen[string(s)]
	}
	for range maxGroupDepth {
		mates := make([][][]byte, len(chains))
		var all [][]byte
		for i := range chains {
			for _, s := range frontier[i] {
				for _, h := range heightsOf(s) {
					if !in[i][h] {
						continue
					}
					for _, r := range cs.txMates(h, s) {
						if !group[i][string(r)] {
							mates[i] = append(mates[i], r)
							all = append(all, r)
						}
					}
				}
			}
		}
		if len(all) == 0 {
			break
		}
		cs.profileCandidates(all)
		for i := range chains {
			var next [][]byte
			for _, r := range mates[i] {
				hs := cs.seen[string(r)]
				if group[i][string(r)] || len(hs) == 0 || len(hs) > cs.hot || slices.ContainsFunc(hs, outside(in[i])) {
					continue
				}
				group[i][string(r)] = true
				next = append(next, r)
			}
			frontier[i] = next
		}
	}
	sizes := make([]int, len(chains))
	for i := range chains {
		sizes[i] = len(group[i])
	}
	return sizes
}

// outside returns a test of whether a height lies outside set.
func outside(set map[int32]bool) func(int32) bool {
	return func(h int32) bool { return !set[h] }
}

// held is the block at height h the scan fetched (nil: none).
func (cs *coverScan) held(h int32) *wire.MsgBlock {
	if cs.log == nil {
		return nil
	}
	return cs.log.held[cs.hash(h)]
}

// txMates are the scripts that share a transaction with script in the
// block at height h, if held, as a basic filter holds them (outputs, and
// the scripts inputs show they spend), of a type the attack names.
func (cs *coverScan) txMates(h int32, script []byte) [][]byte {
	return blockMates(cs.held(h), script)
}

// blockMates are the scripts that share a transaction with script in b
// (none if b is nil), as txMates counts them.
func blockMates(b *wire.MsgBlock, script []byte) [][]byte {
	if b == nil {
		return nil
	}
	var out [][]byte
	for i, tx := range b.Transactions {
		scripts := make([][]byte, 0, len(tx.TxOut)+len(tx.TxIn))
		for _, o := range tx.TxOut {
			scripts = append(scripts, o.PkScript)
		}
		if i > 0 {
			for _, in := range tx.TxIn {
				_, spent := gcs.SpendCandidates(in)
				scripts = append(scripts, spent...)
			}
		}
		if !slices.ContainsFunc(scripts, func(s []byte) bool { return bytes.Equal(s, script) }) {
			continue
		}
		for _, s := range scripts {
			if !bytes.Equal(s, script) && leak.TypeOf(s) != leak.TypeOther {
				out = append(out, s)
			}
		}
	}
	return out
}

// decoyRoom is how many more decoys the cover file takes
// (cover.MaxDecoys).
func (cs *coverScan) decoyRoom() int {
	if cs.set == nil {
		return cover.MaxDecoys
	}
	return cover.MaxDecoys - len(cs.set.Decoys())
}

// keepFetched keeps every pending chain, and every chain settling
// turned down, as covers: the cover file has no room for the decoys
// leaving them out would make, and a script fetched on purpose that is
// neither a cover nor a decoy would be counted as chance by the leak
// report, putting it below the attack. Chains whose groups grew are
// told apart by their size, which a warning says (warnDrawn).
func (cs *coverScan) keepFetched() {
	if len(cs.turned) > 0 || len(cs.pending) > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("the cover file holds %d decoys, its bound: every cover chain this scan fetched is kept as covers rather than left out as a decoy, so that the leak report counts none of them as chance", len(cs.set.Decoys())))
	}
	cs.pending = append(cs.pending, cs.turned...)
	cs.readmitted += len(cs.turned)
	cs.turned = nil
}

// decoyNear keeps as decoys (cover.Set.AddDecoy) the candidates in
// reserve with a block among near, the heights exploring near them
// fetches, and every block in fetched (those the scan has fetched or
// will): their matches are made by the fetching. A candidate with a
// block not fetched matches nothing, whatever else was fetched.
func (cs *coverScan) decoyNear(near []int32, fetched map[int32]bool) {
	if len(near) == 0 {
		return
	}
	at := make(map[int32]bool, len(near))
	for _, h := range near {
		at[h] = true
	}
	for _, c := range cs.spare {
		hs := cs.seen[string(c.Script)]
		if slices.ContainsFunc(hs, func(h int32) bool { return at[h] }) && !slices.ContainsFunc(hs, outside(fetched)) {
			cs.addDecoy(c.Script)
		}
	}
}

// decoyLeftOut keeps as decoys the scripts of fetched, the chains
// drawn whose blocks the scan fetched, that are not covers now.
func (cs *coverScan) decoyLeftOut(fetched [][]byte) {
	if cs.set == nil || len(fetched) == 0 {
		return
	}
	inUse := map[string]bool{}
	for _, s := range cs.set.Scripts() {
		inUse[string(s)] = true
	}
	for _, s := range fetched {
		if !inUse[string(s)] {
			cs.addDecoy(s)
		}
	}
}

// addDecoy keeps script as a decoy, warning once when the file cannot.
func (cs *coverScan) addDecoy(script []byte) {
	if cs.set == nil {
		return
	}
	if err := cs.set.AddDecoy(script); err != nil && !cs.decoysLost {
		cs.decoysLost = true
		cs.warnings = append(cs.warnings, fmt.Sprintf("a script whose blocks were fetched on purpose was not kept as a decoy (%v): the leak report may count its match as chance, which can put it below the attack", err))
	}
}

// trim leaves out, in random order, each pending chain the covers are
// not short without: the chains drawn beyond the need (margin), which
// settling on the blocks fetched did not turn down.
func (cs *coverScan) trim() {
	out := make([]bool, len(cs.pending))
	for _, i := range rand.Perm(len(cs.pending)) {
		out[i] = true // weighed without it
		if len(cs.needOf(keptOf(cs.pending, out))) > 0 {
			out[i] = false
		}
	}
	cs.pending = keptOf(cs.pending, out)
}

// keptOf are the chains not left out (out), in their order.
func keptOf(chains []pendingChain, out []bool) []pendingChain {
	var kept []pendingChain
	for i, ch := range chains {
		if !out[i] {
			kept = append(kept, ch)
		}
	}
	return kept
}

// lapped reports whether the sweep has given every block of the range
// to the scans short in a row, this one included (cover.Explore's
// Explored): more scans would find nothing new.
func (cs *coverScan) lapped() bool {
	return cs.exploredBefore()+uint64(cs.sweptNow) >= uint64(cs.to-cs.from+1)
}

// exploredBefore is the blocks the sweep gave the scans short in a row
// before this one, if they scanned its range: a scan of another range
// (the tip moved on, or the wallet's birth) counts from none, since
// the blocks it did not hold may hold new candidates.
func (cs *coverScan) exploredBefore() uint64 {
	e := cs.set.Explore()
	if e.From != cs.from || e.To != cs.to {
		return 0
	}
	return e.Explored
}

// bound is the most blocks the scan fetches only for covers (none:
// -1).
func (cs *coverScan) bound() int {
	if b := cs.c.cfg.MaxCoverBlocks; b != 0 {
		return b
	}
	return DefaultCoverBlocksFactor * max(len(cs.walletAt), minExploreBlocks)
}

// room is how many blocks more the bound leaves, with the blocks
// explored and those of coverHeights fetched.
func (cs *coverScan) room(bound int, coverHeights [][]int32) int {
	if bound < 0 {
		return math.MaxInt32
	}
	extra := map[int32]bool{}
	for _, h := range slices.Concat(append(coverHeights, cs.explored)...) {
		if !cs.walletAt[h] {
			extra[h] = true
		}
	}
	return bound - len(extra)
}

// coverMargin is the share of the chains short that a draw adds as a
// margin (margin), of which matchRiders keeps those least told from the
// wallet's. On the covers' chain of mainnet's shapes
// (TestCoverChainsLikeWallet, TestCoverRidersLikeWallet): at 0.5 (16
// clients, two runs), group size AUC 0.34, riders AUC 0.36 to 0.41, 1.36
// cover blocks fetched a wallet block (1.18 × its bytes); 32 clients a
// run: at 1.5, group size AUC 0.40 to 0.44 (five runs, one of 16
// clients), riders 0.42 to 0.43 (four), 1.77 to 1.83 (1.52 to 1.56 ×); at
// 2, 0.42 to 0.43 and 0.40 to 0.44 (two runs), 1.9 (1.6 ×); at 2.5, 0.44
// to 0.47 and 0.44 to 0.46 (four runs), 2.21 to 2.28 (1.87 to 1.92 ×); at
// 3, 0.41 to 0.48 (five runs) and 0.41 to 0.43 (four), 2.3 (1.95 ×). A
// margin above 1.5 cost small wallets their strictest targets: at 2.5 a
// wallet of 5 scripts did not meet 0.3 in 12 sessions in either of two
// runs (TestCoverSweep), at 1.5 in two runs of three (both before a scan
// short anyway explored beside the covers in use only). The margin
// is bounded by what the reserve offers: a chain's group is its scripts
// and the scripts seen once in its transactions (the attack's riders),
// and which of those a chain has is read on its blocks, most of which no
// scan read before its draw.
const coverMargin = 1.5

// margin is how many chains of each shape of short a draw adds beyond
// them: coverMargin of them, at least one a shape.
func margin(short map[leak.Profile]int) map[leak.Profile]int {
	out := make(map[leak.Profile]int, len(short))
	for p, k := range short {
		out[p] = int(math.Ceil(coverMargin * float64(k)))
	}
	return out
}

// wantedClasses are the classes of candidates a draw for short wants
// sampled first: those of the chains short, and one appearance above
// each, whose extra match may be a filter's false positive that a block
// fetched refutes.
func wantedClasses(short map[leak.Profile]int) map[uint8]bool {
	want := map[uint8]bool{}
	for p := range short {
		k := min(p.Class, cover.MaxClass)
		want[uint8(k)] = true
		if k < cover.MaxClass {
			want[uint8(k+1)] = true
		}
	}
	return want
}

// wantedShort reports whether a chain of class k is short.
func wantedShort(short map[leak.Profile]int, k int) bool {
	for p := range short {
		if min(p.Class, cover.MaxClass) == k {
			return true
		}
	}
	return false
}

// exploreNext returns up to n heights to explore, not fetched yet by
// the scan: a few near candidates of several appearances (their
// owners' other transactions), then the next of the sweep. They are
// chosen without the wallet: the sweep is keyed by the set's seed, and
// a near height is a candidate's.
func (cs *coverScan) exploreNext(n int) []int32 {
	if n <= 0 {
		return nil
	}
	taken := maps.Clone(cs.labelled)
	if taken == nil {
		taken = map[int32]bool{}
	}
	for _, h := range cs.explored {
		taken[h] = true
	}
	var out []int32
	// Exploring near makes decoys of the candidates near: none without
	// room for each of them (decoyRoom), as the report would count
	// those not kept as chance.
	nearBy := cs.near
	if cs.decoyRoom() < len(cs.spare) {
		nearBy = nil
	}
	for _, h := range nearBy {
		if len(out) >= n/2 {
			break
		}
		if !taken[h] {
			taken[h] = true
			out = append(out, h)
		}
	}
	near := slices.Clone(out)
	order, place := cs.sweep()
	for i, h := range order {
		if len(out) >= n {
			break
		}
		if !taken[h] {
			taken[h] = true
			out = append(out, h)
			p := place[i]
			cs.swept = &p
			cs.sweptNow++
		}
	}
	cs.decoyNear(near, taken)
	slices.Sort(out)
	return out
}

// heights is the plan: the wallet's blocks and those explored, then
// each cover's in turn within the bound; unfetched counts the covers
// whose blocks the bound left out.
func (cs *coverScan) heights(bound int, coverHeights [][]int32) (out []int32, unfetched int) {
	fetch := map[int32]bool{}
	for h := range cs.walletAt {
		fetch[h] = true
	}
	extra := 0
	for _, h := range cs.explored {
		if !fetch[h] {
			fetch[h] = true
			extra++
		}
	}
	for i, hs := range coverHeights {
		var add []int32
		for _, h := range hs {
			if !fetch[h] {
				add = append(add, h)
			}
		}
		if bound >= 0 && extra+len(add) > bound {
			unfetched = len(coverHeights) - i
			break
		}
		extra += len(add)
		for _, h := range add {
			fetch[h] = true
		}
	}
	out = make([]int32, 0, len(fetch))
	for h := range fetch {
		out = append(out, h)
	}
	slices.Sort(out)
	return out, unfetched
}

// sweep is the range's heights in the order the set's sweep explores
// them, and each one's place in it: a height's place is a hash of the
// set's seed and the height, random to anyone else and the same every
// session, and the order starts after the place the last scan reached
// (cover.Explore.Swept) and wraps around, so that sessions explore
// blocks no session before them explored until the range is swept. A
// block mined since takes its place wherever it falls.
func (cs *coverScan) sweep() (order []int32, place []uint64) {
	spots := cs.sweepSpots()
	swept := cs.set.Explore().Swept
	start, _ := slices.BinarySearchFunc(spots, swept, func(s sweepSpot, p uint64) int {
		if s.p <= p {
			return -1
		}
		return 1
	})
	order, place = make([]int32, 0, len(spots)), make([]uint64, 0, len(spots))
	for _, s := range slices.Concat(spots[start:], spots[:start]) {
		order, place = append(order, s.h), append(place, s.p)
	}
	return order, place
}

// sweepSpot is a height and its place in the sweep.
type sweepSpot struct {
	h int32
	p uint64
}

// sweepSpots are the range's heights sorted by their places in the
// sweep, made on the scan's first round of exploring and kept for the
// rounds after it.
func (cs *coverScan) sweepSpots() []sweepSpot {
	if cs.spots != nil {
		return cs.spots
	}
	seed := cs.set.Seed()
	spots := make([]sweepSpot, 0, int(cs.to-cs.from)+1)
	var buf [36]byte
	copy(buf[:], seed[:])
	for h := cs.from; h <= cs.to; h++ {
		binary.BigEndian.PutUint32(buf[32:], uint32(h))
		sum := sha256.Sum256(buf[:])
		spots = append(spots, sweepSpot{h, binary.BigEndian.Uint64(sum[:8])})
	}
	slices.SortFunc(spots, func(a, b sweepSpot) int { return cmp.Compare(a.p, b.p) })
	cs.spots = spots
	return spots
}

// relaxations are what a shape gives up, in turn, where no candidate
// chain has it: the era, then the type and riding, then spent. The
// class and the chain's length are kept.
var relaxations = []func(leak.Profile) leak.Profile{
	func(p leak.Profile) leak.Profile { return p },
	func(p leak.Profile) leak.Profile { p.Era = 0; return p },
	func(p leak.Profile) leak.Profile { p.Era, p.Type, p.Riding = 0, 0, false; return p },
	func(p leak.Profile) leak.Profile {
		p.Era, p.Type, p.Riding, p.Spent, p.ChainSpent = 0, 0, false, false, 0
		return p
	},
}

// draw draws the chains of need from cands, relaxing the shapes
// (relaxations) where none has them; a chain still missing is stood for
// by one candidate of its class drawn alone, as a group of one: alone
// names those.
func (cs *coverScan) draw(cands []leak.Profiled, need map[leak.Profile]int) (out []leak.Profiled, alone map[string]bool) {
	return cs.drawPreferring(cands, need, nil)
}

// drawPreferring is draw taking, for each shape, the chains of each of
// tiers in turn (a nil one: none) before the others.
func (cs *coverScan) drawPreferring(cands []leak.Profiled, need map[leak.Profile]int, tiers ...map[string]bool) (out []leak.Profiled, alone map[string]bool) {
	seed := cs.set.Seed()
	s := uint64(seed[0]) | uint64(seed[1])<<8 | uint64(seed[2])<<16 | uint64(seed[3])<<24 | uint64(seed[4])<<32 | uint64(seed[5])<<40
	used := map[string]bool{}
	byScript := map[string]leak.Profiled{}
	for _, c := range cands {
		byScript[string(c.Script)] = c
	}
	drawOf := func(f func(leak.Profile) leak.Profile, single bool) {
		if len(need) == 0 {
			return
		}
		var pool []leak.Profiled
		for _, c := range cands {
			if used[string(c.Script)] {
				continue
			}
			p := f(c.Profile)
			p.Group = c.Profile.Group
			if single {
				p.Group, p.Chain = 0, 1
			}
			pool = append(pool, leak.Profiled{Script: c.Script, Profile: p})
		}
		n := map[leak.Profile]int{}
		for p, k := range need {
			n[f(p)] += k
		}
		var got []leak.Profiled
		missing := n
		taken := map[string]bool{}
		// Each tier in turn, then every candidate left (all: nil).
		for i, tier := range append(slices.Clone(tiers), nil) {
			if len(missing) == 0 {
				break
			}
			if tier == nil && i < len(tiers) {
				continue
			}
			pre := slices.DeleteFunc(slices.Clone(pool), func(c leak.Profiled) bool {
				return taken[string(c.Script)] || tier != nil && !tier[string(c.Script)]
			})
			more, still := leak.Draw(pre, missing, s)
			for _, g := range more {
				taken[string(g.Script)] = true
			}
			got, missing = append(got, more...), still
		}
		for _, g := range got {
			used[string(g.Script)] = true
			out = append(out, byScript[string(g.Script)])
			if single {
				alone[string(g.Script)] = true
			}
		}
		need = missing
	}
	alone = map[string]bool{}
	for _, f := range relaxations {
		drawOf(f, false)
	}
	drawOf(func(p leak.Profile) leak.Profile { return leak.Profile{Class: p.Class, Chain: 1} }, true)
	return out, alone
}

// fresh returns the candidates of the scan's blocks to keep in reserve:
// up to maxFreshCandidates of them profiled on the held filters, kept
// as keepProfiled says. Candidates are taken in the blocks' order, so
// that a cap on unprofiled ones would keep those of the first few
// blocks and drop the rare chains of every block after them.
func (cs *coverScan) fresh(blocks []*wire.MsgBlock, n int) []cover.Cover {
	cands := cs.candidates(blocks, maxFreshCandidates)
	scripts := make([][]byte, len(cands))
	for i, c := range cands {
		scripts[i] = c.Script
	}
	return keepProfiled(cands, cs.profileCandidates(scripts), cs.hot, n)
}

// keepProfiled returns of cands, whose heights on the held filters are
// at, those to keep in reserve, each with its class: none that matches
// no filter (a spend candidate no output had) or more than hot; the
// chains (Group) holding a script of two or more appearances whole,
// whatever their number, as the rare ones a wallet's chains of several
// appearances need; of the others, whole chains sampled up to n scripts.
func keepProfiled(cands []cover.Cover, at [][]int32, hot, n int) []cover.Cover {
	rare := map[uint64]bool{}
	var kept []cover.Cover
	for i, c := range cands {
		k := len(at[i])
		if k == 0 || k > hot {
			continue
		}
		c.Profile.Class = uint8(min(k, cover.MaxClass))
		if k > 1 && c.Profile.Group != 0 {
			rare[c.Profile.Group] = true
		}
		kept = append(kept, c)
	}
	var out, common []cover.Cover
	for _, c := range kept {
		if rare[c.Profile.Group] || c.Profile.Group == 0 && c.Profile.Class > 1 {
			out = append(out, c)
		} else {
			common = append(common, c)
		}
	}
	return append(out, sampleChains(common, n, nil)...)
}

// DefaultCoverBlocksFactor bounds the blocks a scan fetches only for
// covers, those it explores to find them included, at this many times
// its wallet blocks (counted as at least minExploreBlocks) when
// Config.MaxCoverBlocks is zero.
const DefaultCoverBlocksFactor = 4

// keep adds the candidates profiled and not drawn, and those of blocks,
// to the reserve, keeps the exploration state and saves the set.
func (cs *coverScan) keep(blocks []*wire.MsgBlock) {
	inReserve := map[string]bool{}
	for _, r := range cs.set.Reserve() {
		inReserve[string(r.Script)] = true
	}
	var spare []cover.Cover
	for _, c := range cs.spare {
		if inReserve[string(c.Script)] {
			// Its class as profiled now, for the next scan's sample.
			if _, err := cs.set.Reclass(c.Script, c.Profile.Class); err != nil {
				cs.why = append(cs.why, fmt.Sprintf("a candidate's class could not be kept: %v", err))
			}
		} else if len(spare) < maxNewReserve {
			spare = append(spare, c)
		}
	}
	// Candidates come from every block fetched: the wallet's blocks
	// hold other people's transactions too, at no cost.
	if len(blocks) > 0 {
		spare = append(spare, cs.fresh(blocks, maxNewReserve-len(spare))...)
	}
	for _, c := range spare {
		if err := cs.set.AddReserve(c); errors.Is(err, cover.ErrFull) {
			break
		}
	}
	e := cs.set.Explore()
	before := cs.exploredBefore()
	e.Short, e.Explored = 0, 0
	if cs.short > 0 {
		e.Short = min(cs.set.Explore().Short+1, maxEscalation)
		e.Explored = min(before+uint64(cs.sweptNow), math.MaxUint32)
	}
	e.From, e.To = max(cs.from, 0), max(cs.to, 0)
	if cs.swept != nil {
		e.Swept = *cs.swept
	}
	if err := cs.set.SetExplore(e); err != nil {
		cs.why = append(cs.why, fmt.Sprintf("the exploration state could not be kept: %v", err))
	}
	if err := cs.set.Save(); err != nil {
		cs.why = append(cs.why, fmt.Sprintf("the cover file could not be saved: %v", err))
	}
}

// PrivacyTargetError: a scan's covers stayed short of the privacy
// target (Config.PrivacyTarget) after exploring blocks for candidates
// up to the bound (Config.MaxCoverBlocks), and the scan stopped before
// fetching any block of the wallet's: fetched short of the target, the
// wallet's groups would be exposed to the peers, and a peer that
// records every session keeps them. The candidates found are kept and
// the next scan explores on from where this one stopped; a larger
// bound goes further in one scan; Config.AllowShortCovers fetches the
// wallet's blocks short of the target instead.
type PrivacyTargetError struct {
	Target float64
	// Short counts the cover chains short of the target with every
	// chain drawn, those whose blocks the bound left out included;
	// OnlyBound the chains short only because the bound left out the
	// blocks of chains drawn for them; Unfetched the covers in use whose
	// blocks the bound left out. A scan short with every chain drawn
	// explores beside the covers in use only, its blocks explored taking
	// the room of the chains drawn (it fetches none of them), so
	// Reason names OnlyBound only where nothing else is short.
	Short, OnlyBound, Unfetched int
	// ShortClasses are the classes (appearances in the range, up to
	// leak.MaxProfileClass) of the wallet's chains whose covers are
	// short.
	ShortClasses []int
	// Explored counts the blocks the scan fetched to find candidates,
	// Found the candidates found in them of the classes short, or one
	// above (whose extra match a block may show false), which the next
	// scan draws from (a scan draws none it found: their blocks,
	// fetched before the wallet's, would tell them apart); Bound is the most blocks it
	// fetches only for covers (-1: none).
	Explored, Found, Bound int
	// RangeExplored is true when the scan, or it and the scans short
	// in a row before it, explored every block of its range and this
	// scan found no candidate of the classes short (or one above): the
	// range holds too few candidates of those classes, and neither
	// another scan nor a larger bound finds more in it.
	RangeExplored bool
	// WalletExplored counts the blocks of the wallet's the scan asked
	// for among those explored: those the sweep took as any other, and
	// one of each of its chains none of whose blocks a peer was asked
	// for before, WalletOnce of them (see covers_once.go).
	WalletExplored, WalletOnce int
}

// Fetched says which of the wallet's blocks the scan fetched: none, or
// those among the blocks explored.
func (e *PrivacyTargetError) Fetched() string {
	if e.WalletExplored == 0 {
		return "none of the wallet's blocks was fetched"
	}
	once := ""
	if e.WalletOnce > 0 {
		once = fmt.Sprintf(", %d of them asked once for a chain of the wallet's no peer was asked a block of before", e.WalletOnce)
	}
	return fmt.Sprintf("of the wallet's blocks only %s among those explored were fetched%s", nounCount(e.WalletExplored, "block"), once)
}

func (e *PrivacyTargetError) Error() string {
	on := "scan again to explore on, raise the bound (MaxCoverBlocks), or set AllowShortCovers"
	if e.RangeExplored && e.Unfetched == 0 {
		on = "raise the target (PrivacyTarget: a looser bound needs fewer cover chains), scan a wider range, or set AllowShortCovers"
	}
	return fmt.Sprintf("client: privacy target %g not met: %s; %s: %s to fetch them short of the target", e.Target, e.Reason(), e.Fetched(), on)
}

// nounCount formats n with its noun, plural unless n is 1.
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Reason says what fell short, and the bound.
func (e *PrivacyTargetError) Reason() string {
	bound := fmt.Sprintf("a bound of %d cover blocks", e.Bound)
	if e.Bound < 0 {
		bound = "no bound"
	}
	var s string
	chains := nounCount(e.Short, "cover chain") + " short"
	if len(e.ShortClasses) > 0 {
		cls := make([]string, len(e.ShortClasses))
		for i, k := range e.ShortClasses {
			cls[i] = fmt.Sprint(k)
		}
		chains += " (for the wallet's chains of scripts seen " + strings.Join(cls, ", ") + " times)"
	}
	switch {
	case e.Short == 0 && e.OnlyBound > 0:
		s = fmt.Sprintf("%s short only for %s, which left out the blocks of the chains drawn for them", nounCount(e.OnlyBound, "cover chain"), bound)
	case e.Short > 0 && e.RangeExplored:
		s = fmt.Sprintf("%s after exploring every block of the range (%s in this scan): it holds too few cover candidates of those classes", chains, nounCount(e.Explored, "block"))
	case e.Short > 0:
		s = fmt.Sprintf("%s after exploring %s for candidates within %s", chains, nounCount(e.Explored, "block"), bound)
		if e.Found > 0 {
			s += fmt.Sprintf(" (%s of those classes found in them, for the next scan to draw)", nounCount(e.Found, "candidate"))
		}
	}
	if e.Unfetched > 0 {
		if s != "" {
			s += ", and "
		}
		s += fmt.Sprintf("the blocks of %s in use beyond %s", nounCount(e.Unfetched, "cover"), bound)
	}
	return s
}
