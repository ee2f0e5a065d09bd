package simulate

import (
	"fmt"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// Regime is a way wallets behave that a simulation imitates. The standard
// regime shares the assumptions the attacks of package attack make; each
// other regime breaks one of them, so that "privacy evaluate" measures the
// attacks on data they do not assume (see the package documentation and
// Regimes for what each breaks).
type Regime string

// The regimes.
const (
	RegimeStandard     Regime = "standard"
	RegimePayments     Regime = "payments"
	RegimeReuse        Regime = "reuse"
	RegimeLookahead    Regime = "lookahead"
	RegimeChange       Regime = "change"
	RegimeClustered    Regime = "clustered"
	RegimeHeavyTail    Regime = "heavy-tail"
	RegimeShrink       Regime = "shrink"
	RegimeSharedClient Regime = "shared-client"
	RegimeMixed        Regime = "mixed"
	RegimeCovered      Regime = "covered"
)

// DefaultCoverTarget is the covered regime's target when its options name
// none.
const DefaultCoverTarget = 0.5

// RegimeInfo describes a regime: what its wallets do, and which
// assumption of the attacks it breaks.
type RegimeInfo struct {
	Regime Regime `json:"regime"`
	// Does says what the wallets (or the chain) do in this regime.
	Does string `json:"does"`
	// Breaks names the assumption of the attacks it breaks.
	Breaks string `json:"breaks"`
}

// regimes describes every regime, in the order Regimes lists them.
var regimes = []RegimeInfo{
	{RegimeStandard,
		"wallets of 5 to 500 addresses (log-uniform) whose sessions know a growing prefix of them, the last all, earlier ones at least half; a fifth of the wallets paid another 1 to 3 of its addresses; payers' change beside each payment to a BIP 157 wallet, spent in the next",
		"none: it draws from the attacks' own assumptions (random independent candidates, payments of 1 to 3 addresses, sessions that grow, log-uniform sizes, the payer-change pattern the grouping rule was written for)"},
	{RegimePayments,
		"wallets of 3 to 100 addresses, over half of which paid 1 to 3 others 1 to 20 addresses each, a payee of 6 addresses or fewer in every one of them; BIP 157 wallets are paid several of their scripts in one transaction (batched payouts)",
		"the linking prior on shared addresses (one or a few: 1/S²) and \"a pair sharing far more than chance is one wallet\": a small payee whose every address its payer watches looks like a wallet that grew"},
	{RegimeReuse,
		"half the payments to a wallet pay an address it used before; payers send their change back to one address of theirs",
		"the block-download grouping: a payer's reused change appears in as many blocks as the wallet's reused script, so downloads cannot tell them apart (equal evidence)"},
	{RegimeLookahead,
		"filters hold, beyond the addresses used, a lookahead of the next 100 keys (as bitcoinj does), which the wallet uses later or never",
		"sessions hold only what their wallet used: a filter holds keys that reach the chain only after it was sent, and keys that never do"},
	{RegimeChange,
		"wallets spend most of what they receive and keep change on an internal chain of addresses, which the filters hold; BIP 157 wallets spend nearly every coin",
		"a wallet's addresses are the ones it was paid on: its change addresses, in the universe too, sit beside the payees of its spends (which are not its own) in the same transactions"},
	{RegimeClustered,
		"the chain is clustered as real ones are: outputs spent within a few blocks, batched payouts of 20 to 100 outputs, a few busy scripts paid in many blocks; wallets are paid in bursts",
		"the block-download chance model, which places the scripts' appearances in random blocks: a script created and spent in two neighbouring blocks is fetched whole far more often than chance says when the wallet's blocks are neighbours too"},
	{RegimeHeavyTail,
		"wallet sizes heavy-tailed (a Pareto law of index 1 from 1 to 20,000 addresses), 1 to 8 sessions each; BIP 157 wallets receive 1 to 200 payments, heavy-tailed too",
		"log-uniform sizes and the log-normal prior on wallet sizes that linking fits"},
	{RegimeShrink,
		"a session holds a random part (30 to 100%) of what its wallet used so far, so a later session may hold fewer addresses than an earlier one; BIP 157 sessions after the first rescan only from a later height",
		"sessions that only grow: linking's \"one wallet\" hypothesis has each session's own matches be chance or what the wallet gained between them"},
	{RegimeSharedClient,
		"wallets behind one client address, two or three to a client: their sessions come from one address, and a third of them load one filter (or fetch the blocks) of all the client's wallets at once",
		"one session, one wallet: a session of two wallets shares addresses with each of them"},
	{RegimeMixed,
		"all of the above at once (the sizes of heavy-tail, not covered)",
		"all of the above"},
	{RegimeCovered,
		"BIP 157 clients fetch, beside their own blocks, the blocks of cover scripts of others drawn as whole chains shaped like the wallet's (length, appearances, spent, type, era) with leak.Need and leak.Draw so that no class holds more than the target's share of the wallet's groups (fetch.cover_target, 0.5 unless set), each chain tied by outputs the next transaction spends, as a payer's change; one cover set per wallet for all its sessions",
		"\"the client fetches only its own blocks\": an attack told the target (fetches --cover-target) assumes covers it cannot tell from the wallet's scripts, so it is tested on covers drawn as the client draws them"},
}

// Regimes lists every regime with what it does and what it breaks.
func Regimes() []RegimeInfo { return append([]RegimeInfo(nil), regimes...) }

// ParseRegime reads a regime's name.
func ParseRegime(s string) (Regime, error) {
	for _, r := range regimes {
		if string(r.Regime) == s {
			return r.Regime, nil
		}
	}
	names := make([]string, len(regimes))
	for i, r := range regimes {
		names[i] = string(r.Regime)
	}
	return "", model.OutOfRange(ErrBadOptions, "regime", fmt.Sprintf("%q", s), model.OneOf(names...))
}

// regimeSpec holds what a regime changes in a simulation beyond its
// Options.
type regimeSpec struct {
	paretoSizes   bool    // wallet sizes from a Pareto law of index 1
	payMax        int     // addresses of a payee a payment pays, at most
	payeesMax     int     // payees of one payer, at most
	smallPayee    int     // a payee of at most this many addresses is paid all of them
	reuse         float64 // share of the payments to a wallet that pay an address it used
	payerReuse    bool    // payers send their change back to one address
	lookahead     int     // unused keys a filter holds beyond the used ones
	change        bool    // wallets keep change on internal addresses
	spendShare    float64 // share of a wallet's coins it spends
	clustered     bool    // outputs spent soon, batches, busy scripts, bursts
	shrink        bool    // sessions hold a random part of what was used
	sharedClient  bool    // wallets share client addresses and sessions
	batchPayments bool    // BIP 157 payments of several scripts in one transaction
	heavyPayments bool    // BIP 157 payments per wallet heavy-tailed
	covered       bool    // BIP 157 clients fetch covers' blocks too
}

// spec returns what regime r changes.
func (r Regime) spec() regimeSpec {
	s := regimeSpec{payMax: 3, payeesMax: 1, spendShare: 0.5}
	all := r == RegimeMixed
	if r == RegimePayments || all {
		s.payMax, s.payeesMax, s.smallPayee, s.batchPayments = 20, 3, 6, true
	}
	if r == RegimeReuse || all {
		s.reuse, s.payerReuse = 0.5, true
	}
	if r == RegimeLookahead || all {
		s.lookahead = 100
	}
	if r == RegimeChange || all {
		s.change, s.spendShare = true, 0.9
	}
	s.clustered = r == RegimeClustered || all
	if r == RegimeHeavyTail || all {
		s.paretoSizes, s.heavyPayments = true, true
	}
	s.shrink = r == RegimeShrink || all
	s.sharedClient = r == RegimeSharedClient || all
	s.covered = r == RegimeCovered
	return s
}

// RegimeOptions are the default options of a regime: DefaultOptions with
// the sizes, sessions and payments the regime draws from.
func RegimeOptions(r Regime) (Options, error) {
	if _, err := ParseRegime(string(r)); err != nil {
		return Options{}, err
	}
	o := DefaultOptions()
	o.Regime = r
	switch r {
	case RegimePayments:
		o.Addresses, o.PayFraction = IntRange{3, 100}, 0.6
	case RegimeHeavyTail:
		o.Addresses, o.Sessions = IntRange{1, 20_000}, IntRange{1, 8}
		o.Fetch.Payments = IntRange{1, 200}
	case RegimeMixed:
		o.Addresses, o.Sessions, o.PayFraction = IntRange{1, 20_000}, IntRange{1, 8}, 0.6
		o.Fetch.Payments = IntRange{1, 200}
	case RegimeCovered:
		o.Fetch.CoverTarget = DefaultCoverTarget
	}
	return o, nil
}
