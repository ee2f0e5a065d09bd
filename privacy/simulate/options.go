package simulate

import (
	"errors"
	"fmt"
	"github.com/spvfilter/spvfilter/privacy/model"
	"math"
	"strconv"
	"strings"
)

// ErrBadOptions reports generation options that cannot be simulated.
var ErrBadOptions = errors.New("privacy: bad simulation options")

// IntRange is an inclusive range of integers, drawn from as the package
// documentation says.
type IntRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// FloatRange is an inclusive range of positive numbers, drawn from
// log-uniformly.
type FloatRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// String writes the range as ParseIntRange reads it.
func (r IntRange) String() string {
	if r.Min == r.Max {
		return strconv.Itoa(r.Min)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// String writes the range as ParseFloatRange reads it.
func (r FloatRange) String() string {
	if r.Min == r.Max {
		return strconv.FormatFloat(r.Min, 'g', -1, 64)
	}
	return strconv.FormatFloat(r.Min, 'g', -1, 64) + ".." + strconv.FormatFloat(r.Max, 'g', -1, 64)
}

// ParseIntRange reads "N" or "MIN..MAX" (MIN <= MAX).
func ParseIntRange(s string) (IntRange, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a > b {
		return IntRange{}, fmt.Errorf("%w: %q: want N or MIN..MAX with MIN <= MAX", ErrBadOptions, s)
	}
	return IntRange{a, b}, nil
}

// ParseFloatRange reads "X" or "MIN..MAX" (0 < MIN <= MAX, finite).
func ParseFloatRange(s string) (FloatRange, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err1 != nil || err2 != nil || !(a > 0 && a <= b) || math.IsInf(b, 0) {
		return FloatRange{}, fmt.Errorf("%w: %q: want X or MIN..MAX with 0 < MIN <= MAX", ErrBadOptions, s)
	}
	return FloatRange{a, b}, nil
}

// Options describe a simulation. The zero value of a field is not a
// default: start from DefaultOptions, or RegimeOptions.
type Options struct {
	// Seed makes the simulation: the same options give the same files,
	// byte for byte.
	Seed uint64 `json:"seed"`
	// Regime is how the wallets behave (see Regime).
	Regime Regime `json:"regime"`
	// Wallets is the number of BIP 37 wallets; each has Addresses
	// addresses (log-uniform; Pareto in the heavy-tail regime), a
	// false-positive rate FPRate (log-uniform) and Sessions sessions
	// (uniform).
	Wallets   int        `json:"wallet_count"`
	Sessions  IntRange   `json:"sessions_per_wallet"`
	Addresses IntRange   `json:"addresses_per_wallet"`
	FPRate    FloatRange `json:"fp_rate_range"`
	// Sizing sizes every filter from its element count and rate.
	Sizing model.SizingRule `json:"sizing"`
	// ElementsPerAddress is 1 (the address's hash) or 2 (the public key
	// and its hash, as bitcoinj inserts them); ExtraElements are added to
	// the count a filter is sized for (bitcoinj: 100).
	ElementsPerAddress int `json:"elements_per_address"`
	ExtraElements      int `json:"extra_elements"`
	// PayFraction is the share of wallets that paid another wallet: the
	// payer's filters also hold some of the payee's addresses.
	PayFraction float64 `json:"pay_fraction"`
	// FilterAddFraction is the share of wallet sessions that send some of
	// their addresses by filteradd after the filterload.
	FilterAddFraction float64 `json:"filteradd_fraction"`
	// Noise sessions hold elements of no candidate of the universe;
	// Degenerate sessions send a filter of 0 bytes, one with every bit
	// set, or one of 2 bytes (in turn).
	Noise      int `json:"noise_session_count"`
	Degenerate int `json:"degenerate_session_count"`
	// Chain is the chain every wallet transacts on, whose candidates are
	// the universe.
	Chain ChainOptions `json:"chain"`
	// Fetch describes the BIP 157 clients; no wallet and no noise session
	// leaves them out.
	Fetch FetchOptions `json:"fetch"`
}

// ChainOptions describe the simulated chain: Blocks blocks, each of a
// coinbase, TxsPerBlock transactions of its own (each spending one or two
// earlier outputs and paying two) and the wallets' transactions.
type ChainOptions struct {
	Blocks      int `json:"block_count"`
	TxsPerBlock int `json:"txs_per_block"`
}

// FetchOptions describe the BIP 157 clients of a simulation.
type FetchOptions struct {
	// Wallets is the number of BIP 157 wallets, each with Sessions
	// sessions that rescan from its birthday, Payments payments received
	// from Payers payers, and Decoys blocks fetched on purpose per session.
	Wallets  int      `json:"wallet_count"`
	Sessions IntRange `json:"sessions_per_wallet"`
	Payments IntRange `json:"payments_per_wallet"`
	Payers   IntRange `json:"payers_per_wallet"`
	Decoys   int      `json:"decoys_per_session"`
	// Noise sessions fetch random blocks for no wallet.
	Noise int `json:"noise_session_count"`
	// CoverTarget is the target the covered regime's clients draw covers
	// to (see RegimeCovered), in (0, 1); other regimes ignore it.
	CoverTarget float64 `json:"cover_target,omitempty"`
	// FreshCovers, in the covered regime, draws a new cover set for each
	// session, as a client that lost its cover file would: the negative
	// control of intersecting sessions, which strips such covers. Its
	// labels list every set's covers (a cover may be listed twice).
	FreshCovers bool `json:"fresh_covers,omitempty"`
}

// DefaultOptions are the defaults of "spvfilter privacy simulate", the
// standard regime: 50 wallets of 5 to 500 addresses, 1 to 4 sessions each,
// rates from 1e-5 to 1e-2, a key and its hash per address with Core's
// sizing and no extra elements (so that a filter's fill is the one its
// rate gives; bitcoinj sizes for 100 more, which leaves a small wallet's
// filter nearly empty), a fifth of the wallets paying another, 8 noise and
// 3 degenerate sessions; a chain of 1,000 blocks of 50 transactions
// (about 100,000 candidates); 20 BIP 157 wallets.
func DefaultOptions() Options {
	return Options{
		Seed:               1,
		Regime:             RegimeStandard,
		Wallets:            50,
		Sessions:           IntRange{1, 4},
		Addresses:          IntRange{5, 500},
		FPRate:             FloatRange{1e-5, 1e-2},
		Sizing:             model.SizingCore,
		ElementsPerAddress: 2,
		ExtraElements:      0,
		PayFraction:        0.2,
		FilterAddFraction:  0.2,
		Noise:              8,
		Degenerate:         3,
		Chain:              ChainOptions{Blocks: 1000, TxsPerBlock: 50},
		Fetch: FetchOptions{
			Wallets:  20,
			Sessions: IntRange{1, 2},
			Payments: IntRange{3, 8},
			Payers:   IntRange{1, 3},
			Decoys:   3,
			Noise:    1,
		},
	}
}

// MaxChainTransactions is the most transactions a simulated chain holds
// (Chain.Blocks times Chain.TxsPerBlock): it bounds the chain's own
// transactions, and so the candidates.
const MaxChainTransactions = 2_000_000

// Limits of a simulation, so that its files stay of a size a test or a
// laptop handles.
const (
	maxWallets      = 10_000
	maxSessions     = 64
	maxAddresses    = 100_000
	maxSpecial      = 10_000
	maxBlocks       = 1_000_000
	maxTxsPerBlock  = 1_000
	maxFetchWallets = 1_000
	maxPayments     = 1_000
	maxDecoys       = 1_000
	// maxTotalAddresses bounds all wallets' addresses together, and
	// maxTotalSessions the sessions of either side.
	maxTotalAddresses = 5_000_000
	maxTotalSessions  = 20_000
)

func (o *Options) validate() error {
	if _, err := ParseRegime(string(o.Regime)); err != nil {
		return err
	}
	checks := []optionCheck{
		inRange(o.Wallets >= 0 && o.Wallets <= maxWallets, "wallet_count", o.Wallets, model.WholeIn(0, maxWallets)),
		inRange(o.Sessions.Min >= 1 && o.Sessions.Max <= maxSessions && o.Sessions.Min <= o.Sessions.Max, "sessions_per_wallet", o.Sessions, model.WholeIn(1, maxSessions).Spanned()),
		inRange(o.Addresses.Min >= 1 && o.Addresses.Max <= maxAddresses && o.Addresses.Min <= o.Addresses.Max, "addresses_per_wallet", o.Addresses, model.WholeIn(1, maxAddresses).Spanned()),
		{ok: uint64(o.Wallets)*uint64(max(o.Addresses.Max, 0)) <= maxTotalAddresses, field: "wallet_count", value: o.Wallets, msg: fmt.Sprintf("wallets of up to %d addresses: more than %d addresses", o.Addresses.Max, maxTotalAddresses)},
		inRange(o.FPRate.Min > 0 && o.FPRate.Max < 1 && o.FPRate.Min <= o.FPRate.Max, "fp_rate_range", o.FPRate, model.Between("rate", 0, 1, true, true).Spanned()),
		inRange(o.Sizing == model.SizingCore || o.Sizing == model.SizingBitcoinj, "sizing", fmt.Sprintf("%q", o.Sizing), model.OneOf(string(model.SizingCore), string(model.SizingBitcoinj))),
		inRange(o.ElementsPerAddress == 1 || o.ElementsPerAddress == 2, "elements_per_address", o.ElementsPerAddress, model.OneOf("1", "2")),
		inRange(o.ExtraElements >= 0 && o.ExtraElements <= maxAddresses, "extra_elements", o.ExtraElements, model.WholeIn(0, maxAddresses)),
		inRange(o.PayFraction >= 0 && o.PayFraction <= 1, "pay_fraction", o.PayFraction, model.Between("", 0, 1, false, false)),
		inRange(o.FilterAddFraction >= 0 && o.FilterAddFraction <= 1, "filteradd_fraction", o.FilterAddFraction, model.Between("", 0, 1, false, false)),
		inRange(o.Noise >= 0 && o.Noise <= maxSpecial, "noise_session_count", o.Noise, model.WholeIn(0, maxSpecial)),
		inRange(o.Degenerate >= 0 && o.Degenerate <= maxSpecial, "degenerate_session_count", o.Degenerate, model.WholeIn(0, maxSpecial)),
		inRange(o.Chain.Blocks >= 10 && o.Chain.Blocks <= maxBlocks, "chain.block_count", o.Chain.Blocks, model.WholeIn(10, maxBlocks)),
		inRange(o.Chain.TxsPerBlock >= 1 && o.Chain.TxsPerBlock <= maxTxsPerBlock, "chain.txs_per_block", o.Chain.TxsPerBlock, model.WholeIn(1, maxTxsPerBlock)),
		{ok: int64(o.Chain.Blocks)*int64(o.Chain.TxsPerBlock) <= MaxChainTransactions, field: "chain.block_count",
			value: bound{o.Chain.Blocks, "chain.txs_per_block", o.Chain.TxsPerBlock, MaxChainTransactions / max(o.Chain.TxsPerBlock, 1)},
			msg:   fmt.Sprintf("with chain.txs_per_block %d, more than the %d transactions of a chain: at most %d blocks", o.Chain.TxsPerBlock, MaxChainTransactions, MaxChainTransactions/max(o.Chain.TxsPerBlock, 1))},
		{ok: o.Wallets+o.Noise+o.Degenerate+o.Fetch.Wallets+o.Fetch.Noise > 0, msg: "nothing to simulate: no wallet and no noise or degenerate session on either side"},
		{ok: o.Wallets == 0 || o.Wallets > 1 || o.PayFraction == 0, field: "pay_fraction", value: o.PayFraction, msg: "a wallet can only pay another: it needs two wallets"},
		{ok: o.Wallets*o.Sessions.Max+o.Noise+o.Degenerate <= maxTotalSessions, field: "wallet_count", value: o.Wallets, msg: fmt.Sprintf("wallets of up to %d sessions, %d noise and %d degenerate: more than %d sessions", o.Sessions.Max, o.Noise, o.Degenerate, maxTotalSessions)},
	}
	if err := firstFailed(checks); err != nil {
		return err
	}
	if o.Regime == RegimeCovered && o.Fetch.Wallets > 0 && !(o.Fetch.CoverTarget > 0 && o.Fetch.CoverTarget < 1) {
		fe := model.OutOfRange(ErrBadOptions, "fetch.cover_target", o.Fetch.CoverTarget, model.Between("probability", 0, 1, true, true))
		fe.Msg = "the covered regime needs a target in (0, 1)"
		return fe
	}
	return o.Fetch.validate(o.Chain.Blocks)
}

func (f *FetchOptions) validate(blocks int) error {
	if f.Wallets == 0 && f.Noise == 0 {
		return nil
	}
	return firstFailed([]optionCheck{
		inRange(f.Wallets >= 0 && f.Wallets <= maxFetchWallets, "fetch.wallet_count", f.Wallets, model.WholeIn(0, maxFetchWallets)),
		inRange(f.Sessions.Min >= 1 && f.Sessions.Max <= maxSessions && f.Sessions.Min <= f.Sessions.Max, "fetch.sessions_per_wallet", f.Sessions, model.WholeIn(1, maxSessions).Spanned()),
		inRange(f.Payments.Min >= 1 && f.Payments.Max <= maxPayments && f.Payments.Min <= f.Payments.Max, "fetch.payments_per_wallet", f.Payments, model.WholeIn(1, maxPayments).Spanned()),
		inRange(f.Payers.Min >= 1 && f.Payers.Max <= maxPayments && f.Payers.Min <= f.Payers.Max, "fetch.payers_per_wallet", f.Payers, model.WholeIn(1, maxPayments).Spanned()),
		decoysCheck(f.Decoys, blocks),
		inRange(f.Noise >= 0 && f.Noise <= maxSpecial, "fetch.noise_session_count", f.Noise, model.WholeIn(0, maxSpecial)),
		{ok: f.Wallets*f.Sessions.Max+f.Noise <= maxTotalSessions, field: "fetch.wallet_count", value: f.Wallets, msg: fmt.Sprintf("fetch wallets of up to %d sessions and %d noise sessions: more than %d", f.Sessions.Max, f.Noise, maxTotalSessions)},
	})
}

// decoysCheck is the rule of a fetch session's decoys: at most maxDecoys,
// and fewer than half the blocks of the chain, so that a session still
// has blocks of its own to fetch. When the blocks are what binds, the
// rule names chain.block_count and the decoys it allows.
func decoysCheck(decoys, blocks int) optionCheck {
	ok := decoys >= 0 && decoys <= maxDecoys && decoys < blocks/2
	if half := max(blocks/2-1, 0); half < maxDecoys {
		return optionCheck{ok: ok, field: "fetch.decoys_per_session", value: bound{decoys, "chain.block_count", blocks, half},
			msg: fmt.Sprintf("not in 0..%d: fewer than half of chain.block_count %d", half, blocks)}
	}
	return inRange(ok, "fetch.decoys_per_session", decoys, model.WholeIn(0, maxDecoys))
}

// optionCheck is a rule of the options: when ok is false, the field (its
// JSON key, "" for a rule of several) holds value, and msg says why. A
// value of type bound is that of a rule that bounds the field by another;
// rng, when not nil, is the range a rule of the field alone holds it to.
type optionCheck struct {
	ok    bool
	field string
	value any
	msg   string
	rng   *model.Range
}

// inRange is the rule that the field, of value v, lies in r (ok says
// whether it does): its error says r and carries it.
func inRange(ok bool, field string, v any, r model.Range) optionCheck {
	return optionCheck{ok: ok, field: field, value: v, msg: r.Refusal(), rng: &r}
}

// bound is the value of a field that another field bounds: the field's
// value, the other field's JSON key and value, and the most the rule
// allows the field given the other's value.
type bound struct {
	value      any
	other      string
	otherValue any
	most       int
}

// firstFailed returns the error of the first rule that fails: a
// model.FieldError of kind ErrBadOptions naming its field, and for a
// bound the other field and the most the rule allows.
func firstFailed(checks []optionCheck) error {
	for _, c := range checks {
		switch {
		case c.ok:
		case c.field == "":
			return fmt.Errorf("%w: %s", ErrBadOptions, c.msg)
		default:
			fe := &model.FieldError{Kind: ErrBadOptions, Field: c.field, Value: fmt.Sprint(c.value), Msg: c.msg, Range: c.rng}
			if b, ok := c.value.(bound); ok {
				fe.Value, fe.Other, fe.OtherValue, fe.Most = fmt.Sprint(b.value), b.other, fmt.Sprint(b.otherValue), fmt.Sprint(b.most)
			}
			return fe
		}
	}
	return nil
}
