package simulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ErrBadLabels reports a labels file that is malformed or contradicts
// itself.
var ErrBadLabels = errors.New("privacy: bad labels")

// LabelsFormat and LabelsVersion open every labels file.
const (
	LabelsFormat  = "spvfilter-simulate-labels"
	LabelsVersion = 2
)

// maxLabelsBytes bounds a labels file: the largest simulation's addresses
// and sessions with room to spare.
const maxLabelsBytes = 1 << 30

// SessionKind says what sent a session.
type SessionKind string

// The kinds of sessions.
const (
	// KindWallet is a wallet's session: its filters hold the wallet's
	// addresses (BIP 37), or it fetched the wallet's blocks (BIP 157).
	KindWallet SessionKind = "wallet"
	// KindNoise is a session of no wallet of the universe: a filter of
	// elements no candidate has, or random block downloads.
	KindNoise SessionKind = "noise"
	// KindEmpty sent a filter of 0 bytes, which matches everything.
	KindEmpty SessionKind = "empty"
	// KindFull sent a filter with every bit set, which matches everything.
	KindFull SessionKind = "full"
	// KindTiny sent a filter of 2 bytes holding random elements, which
	// matches about half of everything.
	KindTiny SessionKind = "tiny"
)

// Labels are the ground truth of a simulation: who sent each session and
// what its filters hold. Session IDs are those of the capture's records.
//
// The candidates a wallet session's filters hold are listed in its Holds:
// addresses of its wallet and the addresses its wallet watches (those of
// the payments it made, Payment.Addresses). A candidate is a session's
// wallet's when one of its wallets owns or watches it.
type Labels struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Options Options `json:"options"`
	Files   Files   `json:"files"`
	// UniverseSize counts the universe file's candidates.
	UniverseSize int       `json:"universe_size"`
	Wallets      []Wallet  `json:"wallets"`
	Payments     []Payment `json:"payments"`
	Sessions     []Session `json:"sessions"`
	// Fetch labels the chain of the block-download attack, if simulated.
	Fetch *FetchLabels `json:"fetch,omitempty"`

	truth *truth // built by check
}

// Files names the files of a simulation, relative to its directory.
type Files struct {
	Universe     string `json:"universe_file"`
	Capture      string `json:"capture_file"`
	Labels       string `json:"labels_file"`
	Index        string `json:"index_file,omitempty"`
	FetchCapture string `json:"fetch_capture_file,omitempty"`
}

// Wallet is a BIP 37 wallet: its addresses in the order they first
// appear on the chain, every one of them in the universe.
type Wallet struct {
	ID        string   `json:"wallet"`
	FPRate    float64  `json:"fp_rate"`
	Addresses []string `json:"addresses"`
}

// Payment is a wallet paying another: the payer's filters also hold the
// payee's addresses it paid.
type Payment struct {
	Payer     string   `json:"payer"`
	Payee     string   `json:"payee"`
	Addresses []string `json:"addresses"`
}

// Session is one BIP 37 connection of the capture.
type Session struct {
	ID     string      `json:"session"`
	Client string      `json:"client"`
	Kind   SessionKind `json:"kind"`
	// Wallet is the sending wallet, empty for every kind but KindWallet;
	// Wallets, when the session's filter is of several wallets at once
	// (the shared-client regime), names them all, Wallet first.
	Wallet  string   `json:"wallet,omitempty"`
	Wallets []string `json:"wallets,omitempty"`
	// Holds lists the universe's candidates the session's filters hold:
	// its wallets' addresses (those its filterload holds, then those
	// filteradd sent) and the payees' addresses they watch. Loaded counts
	// the wallets' keys the filterload holds (lookahead keys that never
	// reach the chain included), Added those filteradd sent afterwards.
	Holds  []string `json:"holds"`
	Loaded int      `json:"loaded_count"`
	Added  int      `json:"added_count"`
	// Height is the chain's height when the session was sent: its
	// wallets' addresses used by then are what it knows.
	Height int32 `json:"height"`
	// FPRate and SizedFor are what the filter was sized for, Elements
	// what was inserted (filteradd included); FilterBytes and HashFuncs
	// the filter's size and hash functions (named as the CLI's JSON
	// names them; labels of version 1 said elements and hash_funcs).
	FPRate      float64 `json:"fp_rate"`
	SizedFor    int     `json:"sized_for"`
	Elements    int     `json:"element_count"`
	FilterBytes int     `json:"filter_bytes"`
	HashFuncs   int     `json:"hash_function_count"`
}

// FetchLabels label the chain and the BIP 157 sessions of the
// block-download attack. Candidates are named as in the index.
type FetchLabels struct {
	Network        string         `json:"network"`
	FirstHeight    int32          `json:"first_height"`
	BlockCount     int            `json:"block_count"`
	CandidateCount int            `json:"candidate_count"`
	Wallets        []FetchWallet  `json:"wallets"`
	Sessions       []FetchSession `json:"sessions"`
}

// FetchWallet is a BIP 157 wallet: its scripts, and the scripts that share
// its transactions (the payers' change outputs beside the payments to it,
// the payees beside its own spends), which are not the wallet's.
type FetchWallet struct {
	ID          string   `json:"wallet"`
	Birth       int32    `json:"birth_height"`
	Scripts     []string `json:"scripts"`
	PayerChange []string `json:"payer_change"`
	Payees      []string `json:"payees"`
	// Covers are the scripts of others its client fetches the blocks of
	// to hide its own (the covered regime), drawn as chains of its
	// chains' shapes; CoverMates the links of those chains, outputs
	// beside a cover that the next transaction of the chain spends (the
	// attack ties the chain through them, as it ties a wallet's payments
	// through its payers' change); CoversMissing the chains its shapes
	// needed that the chain could not give.
	Covers        []string `json:"covers,omitempty"`
	CoverMates    []string `json:"cover_mates,omitempty"`
	CoversMissing int      `json:"covers_missing,omitempty"`
}

// FetchSession is one BIP 157 connection: the range it scanned and why it
// fetched each block.
type FetchSession struct {
	ID     string      `json:"session"`
	Client string      `json:"client"`
	Kind   SessionKind `json:"kind"`
	// Wallet is the wallet it scans for; Wallets, when it scans for
	// several at once (the shared-client regime), names them all, Wallet
	// first.
	Wallet  string   `json:"wallet,omitempty"`
	Wallets []string `json:"wallets,omitempty"`
	// ScannedFrom..ScannedTo is the range of the filters it matched
	// (getcfilters); Scripts lists its wallets' scripts that appear
	// there, those its downloads can reveal.
	ScannedFrom int32    `json:"scanned_from"`
	ScannedTo   int32    `json:"scanned_to"`
	Scripts     []string `json:"scripts"`
	// WalletHeights are the blocks holding the wallet's scripts,
	// DecoyHeights those fetched on purpose, FalsePositiveHeights those
	// whose BIP 158 filter matched by chance.
	WalletHeights        []int32 `json:"wallet_heights"`
	DecoyHeights         []int32 `json:"decoy_heights"`
	FalsePositiveHeights []int32 `json:"false_positive_heights"`
	// CoverHeights are the blocks fetched for its wallets' covers alone
	// (the covered regime).
	CoverHeights []int32 `json:"cover_heights,omitempty"`
}

// ReadLabels reads and checks a labels file (see Labels): exactly one JSON
// object of the current format and version, no unknown field, and labels
// that agree with themselves (every session's wallet exists, every
// payment's addresses are its payee's, no ID twice, counts within the
// wallets). Anything else is ErrBadLabels.
func ReadLabels(r io.Reader) (*Labels, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxLabelsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if len(b) > maxLabelsBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBadLabels, maxLabelsBytes)
	}
	return DecodeLabels(b)
}

// DecodeLabels is ReadLabels on the file's bytes. Labels of an earlier
// version are refused, saying so, before their fields are read: their
// sessions lack what the filters hold and name fields differently
// (hash_funcs, elements).
func DecodeLabels(b []byte) (*Labels, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if json.Unmarshal(b, &head) == nil && head.Format == LabelsFormat && head.Version != LabelsVersion {
		return nil, fmt.Errorf("%w: labels of version %d, this program reads version %d: run privacy simulate again to write them", ErrBadLabels, head.Version, LabelsVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l Labels
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadLabels, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrBadLabels)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	return &l, nil
}

// Write writes the labels as indented JSON.
func (l *Labels) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("labels: %w", err)
	}
	return nil
}

// truth is what scoring looks up: wallets and sessions by ID.
type truth struct {
	// owner names the wallet of each labelled candidate, for the
	// mistakes a report makes.
	owner         map[string]string
	wallets       map[string]*walletTruth
	sessions      map[string]*Session
	fetchWallets  map[string]*fetchWalletTruth
	fetchSessions map[string]*FetchSession
}

type walletTruth struct {
	w *Wallet
	// rank is each owned address's place in Addresses; watched are the
	// payees' addresses its filters hold.
	rank    map[string]int
	watched map[string]bool
}

type fetchWalletTruth struct {
	w       *FetchWallet
	scripts map[string]bool
}

// walletsOf names a session's wallets: Wallets when it names several,
// else Wallet (none for a session of no wallet).
func walletsOf(wallet string, wallets []string) []string {
	switch {
	case len(wallets) > 0:
		return wallets
	case wallet != "":
		return []string{wallet}
	}
	return nil
}

// owns reports whether the candidate is the wallet's: owned or watched.
func (wt *walletTruth) owns(c string) bool {
	_, own := wt.rank[c]
	return own || wt.watched[c]
}

// check validates the labels and builds their truth.
func (l *Labels) check() error {
	if l.Format != LabelsFormat || l.Version != LabelsVersion {
		return fmt.Errorf("%w: format %q version %d, want %q version %d", ErrBadLabels, l.Format, l.Version, LabelsFormat, LabelsVersion)
	}
	owner := map[string]string{}
	t := &truth{owner: owner, wallets: map[string]*walletTruth{}, sessions: map[string]*Session{}}
	for i := range l.Wallets {
		w := &l.Wallets[i]
		if w.ID == "" || t.wallets[w.ID] != nil {
			return fmt.Errorf("%w: wallet %d: ID %q empty or repeated", ErrBadLabels, i+1, w.ID)
		}
		wt := &walletTruth{w: w, rank: make(map[string]int, len(w.Addresses)), watched: map[string]bool{}}
		for j, a := range w.Addresses {
			if a == "" || owner[a] != "" {
				return fmt.Errorf("%w: wallet %s: address %q empty or owned twice", ErrBadLabels, w.ID, a)
			}
			owner[a] = w.ID
			wt.rank[a] = j
		}
		t.wallets[w.ID] = wt
	}
	if n := len(owner); l.UniverseSize < n {
		return fmt.Errorf("%w: universe of %d candidates holds fewer than the wallets' %d addresses", ErrBadLabels, l.UniverseSize, n)
	}
	for i, p := range l.Payments {
		payer, payee := t.wallets[p.Payer], t.wallets[p.Payee]
		if payer == nil || payee == nil || payer == payee || len(p.Addresses) == 0 {
			return fmt.Errorf("%w: payment %d: %q to %q: unknown or same wallets, or no address", ErrBadLabels, i+1, p.Payer, p.Payee)
		}
		for _, a := range p.Addresses {
			if owner[a] != p.Payee {
				return fmt.Errorf("%w: payment %d: %q is not an address of %s", ErrBadLabels, i+1, a, p.Payee)
			}
			payer.watched[a] = true
		}
	}
	for i := range l.Sessions {
		if err := t.addSession(&l.Sessions[i]); err != nil {
			return err
		}
	}
	if l.Fetch != nil {
		if err := t.addFetch(l.Fetch); err != nil {
			return err
		}
	}
	l.truth = t
	return nil
}

func (t *truth) addSession(s *Session) error {
	if s.ID == "" || t.sessions[s.ID] != nil {
		return fmt.Errorf("%w: session ID %q empty or repeated", ErrBadLabels, s.ID)
	}
	switch s.Kind {
	case KindWallet:
		if len(s.Wallets) > 0 && s.Wallets[0] != s.Wallet {
			return fmt.Errorf("%w: session %s: wallets %v do not start with its wallet %q", ErrBadLabels, s.ID, s.Wallets, s.Wallet)
		}
		var ws []*walletTruth
		for _, id := range walletsOf(s.Wallet, s.Wallets) {
			w := t.wallets[id]
			if w == nil || slices.Contains(ws, w) {
				return fmt.Errorf("%w: session %s: unknown or repeated wallet %q", ErrBadLabels, s.ID, id)
			}
			ws = append(ws, w)
		}
		if len(ws) == 0 || s.Loaded < 0 || s.Added < 0 {
			return fmt.Errorf("%w: session %s: no wallet, or %d loaded and %d added", ErrBadLabels, s.ID, s.Loaded, s.Added)
		}
		for _, a := range s.Holds {
			if !slices.ContainsFunc(ws, func(w *walletTruth) bool { return w.owns(a) }) {
				return fmt.Errorf("%w: session %s: it holds %q, of none of its wallets", ErrBadLabels, s.ID, a)
			}
		}
	case KindNoise, KindEmpty, KindFull, KindTiny:
		if s.Wallet != "" || len(s.Wallets) > 0 || len(s.Holds) > 0 || s.Loaded != 0 || s.Added != 0 {
			return fmt.Errorf("%w: session %s of kind %s names a wallet or its addresses", ErrBadLabels, s.ID, s.Kind)
		}
	default:
		return fmt.Errorf("%w: session %s: unknown kind %q", ErrBadLabels, s.ID, s.Kind)
	}
	t.sessions[s.ID] = s
	return nil
}

func (t *truth) addFetch(f *FetchLabels) error {
	if f.BlockCount < 1 || int64(f.FirstHeight)+int64(f.BlockCount) > 1<<31 || f.FirstHeight < 0 {
		return fmt.Errorf("%w: fetch: %d blocks from %d", ErrBadLabels, f.BlockCount, f.FirstHeight)
	}
	last := f.FirstHeight + int32(f.BlockCount-1)
	t.fetchWallets, t.fetchSessions = map[string]*fetchWalletTruth{}, map[string]*FetchSession{}
	for i := range f.Wallets {
		w := &f.Wallets[i]
		if w.ID == "" || t.fetchWallets[w.ID] != nil {
			return fmt.Errorf("%w: fetch wallet %d: ID %q empty or repeated", ErrBadLabels, i+1, w.ID)
		}
		wt := &fetchWalletTruth{w: w, scripts: make(map[string]bool, len(w.Scripts))}
		for _, s := range w.Scripts {
			if s == "" || wt.scripts[s] {
				return fmt.Errorf("%w: fetch wallet %s: script %q empty or repeated", ErrBadLabels, w.ID, s)
			}
			wt.scripts[s] = true
		}
		for _, s := range w.Scripts {
			t.owner[s] = w.ID
		}
		for _, s := range slices.Concat(w.PayerChange, w.Payees) {
			if wt.scripts[s] {
				return fmt.Errorf("%w: fetch wallet %s: %q is both its script and another's", ErrBadLabels, w.ID, s)
			}
		}
		for _, s := range w.PayerChange {
			t.owner[s] = "payer change beside " + w.ID
		}
		for _, s := range w.Payees {
			t.owner[s] = "payee of " + w.ID
		}
		t.fetchWallets[w.ID] = wt
	}
	for i := range f.Sessions {
		s := &f.Sessions[i]
		if s.ID == "" || t.fetchSessions[s.ID] != nil || t.sessions[s.ID] != nil {
			return fmt.Errorf("%w: fetch session ID %q empty or repeated", ErrBadLabels, s.ID)
		}
		switch {
		case s.Kind == KindWallet && len(s.Wallets) > 0 && s.Wallets[0] != s.Wallet:
			return fmt.Errorf("%w: fetch session %s: wallets %v do not start with its wallet %q", ErrBadLabels, s.ID, s.Wallets, s.Wallet)
		case s.Kind == KindNoise && (s.Wallet != "" || len(s.Wallets) > 0 || len(s.Scripts) > 0):
			return fmt.Errorf("%w: fetch session %s: noise with a wallet or scripts", ErrBadLabels, s.ID)
		case s.Kind != KindWallet && s.Kind != KindNoise:
			return fmt.Errorf("%w: fetch session %s: kind %q, want wallet or noise", ErrBadLabels, s.ID, s.Kind)
		case s.ScannedFrom < f.FirstHeight || s.ScannedTo > last || s.ScannedFrom > s.ScannedTo:
			return fmt.Errorf("%w: fetch session %s: scanned %d..%d outside the chain %d..%d", ErrBadLabels, s.ID, s.ScannedFrom, s.ScannedTo, f.FirstHeight, last)
		}
		var ws []*fetchWalletTruth
		for _, id := range walletsOf(s.Wallet, s.Wallets) {
			w := t.fetchWallets[id]
			if w == nil || slices.Contains(ws, w) {
				return fmt.Errorf("%w: fetch session %s: unknown or repeated wallet %q", ErrBadLabels, s.ID, id)
			}
			ws = append(ws, w)
		}
		if s.Kind == KindWallet && len(ws) == 0 {
			return fmt.Errorf("%w: fetch session %s: no wallet", ErrBadLabels, s.ID)
		}
		for _, sc := range s.Scripts {
			if !slices.ContainsFunc(ws, func(w *fetchWalletTruth) bool { return w.scripts[sc] }) {
				return fmt.Errorf("%w: fetch session %s: script %q of none of its wallets", ErrBadLabels, s.ID, sc)
			}
		}
		for _, h := range slices.Concat(s.WalletHeights, s.DecoyHeights, s.FalsePositiveHeights, s.CoverHeights) {
			if h < s.ScannedFrom || h > s.ScannedTo {
				return fmt.Errorf("%w: fetch session %s: height %d outside its scan %d..%d", ErrBadLabels, s.ID, h, s.ScannedFrom, s.ScannedTo)
			}
		}
		t.fetchSessions[s.ID] = s
	}
	return nil
}

// sessionTruth returns the candidates a wallet session's filters hold
// (none for other kinds).
func (l *Labels) sessionTruth(s *Session) map[string]bool {
	out := map[string]bool{}
	if s.Kind != KindWallet {
		return out
	}
	for _, a := range s.Holds {
		out[a] = true
	}
	return out
}

// sessionOwns returns whether a candidate is one of a session's wallets'
// (nil for a session of no wallet).
func (t *truth) sessionOwns(wallet string, wallets []string) func(string) bool {
	var ws []*walletTruth
	for _, id := range walletsOf(wallet, wallets) {
		if w := t.wallets[id]; w != nil {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return nil
	}
	return func(c string) bool { return slices.ContainsFunc(ws, func(w *walletTruth) bool { return w.owns(c) }) }
}

// WalletSession labels a session of one wallet (ID wallet, its scripts
// scripts, each appearing in the blocks heights names) that scanned the
// filters from..to and fetched the blocks at fetched, as a client that
// fetches no decoy does: the wallet's scripts that appear in the range,
// their blocks there, and the other blocks it fetched in the range, its
// filters' false positives.
func WalletSession(id, client, wallet string, scripts []string, heights map[string][]int32, from, to int32, fetched []int32) FetchSession {
	fs := FetchSession{ID: id, Client: client, Kind: KindWallet, Wallet: wallet, ScannedFrom: from, ScannedTo: to,
		Scripts: []string{}, DecoyHeights: []int32{}, FalsePositiveHeights: []int32{}, WalletHeights: []int32{}}
	own := map[int32]bool{}
	for _, a := range scripts {
		in := false
		for _, h := range heights[a] {
			if h >= from {
				own[h], in = true, true
			}
		}
		if in {
			fs.Scripts = append(fs.Scripts, a)
		}
	}
	for h := range own {
		fs.WalletHeights = append(fs.WalletHeights, h)
	}
	slices.Sort(fs.WalletHeights)
	for _, h := range fetched {
		if !own[h] && h >= from {
			fs.FalsePositiveHeights = append(fs.FalsePositiveHeights, h)
		}
	}
	slices.Sort(fs.FalsePositiveHeights)
	return fs
}
