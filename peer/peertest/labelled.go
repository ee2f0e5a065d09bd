package peertest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/wire"
)

// LabelledWallet is a wallet whose keys a test knows: it is paid by
// payers in turn, each of which sends its change to a new address each
// time and spends it in its next payment, and it spends what it received
// (the oldest first) to a new payee, keeping change. BuildLabelledChain
// fills the addresses.
type LabelledWallet struct {
	ID      string
	Birth   int32  // the first height its scans start from
	Receive []*Key // one per payment; a key given twice is an address paid again
	Change  []*Key // one per spend, in order
	Payers  []*Key // payment j is paid by Payers[j%len(Payers)]

	// Scripts are the addresses of its own scripts that the chain
	// holds (receive keys, change of its spends), PayerChange those of
	// its payers' change and Payees those it paid.
	Scripts, PayerChange, Payees []string
}

// WalletEvent is what a wallet does in a round: be paid its payment
// Payment (to Receive[Payment]), or spend.
type WalletEvent struct {
	Wallet  *LabelledWallet
	Payment int
	Spend   bool
}

// LabelledChainSpec shapes a labelled chain.
type LabelledChainSpec struct {
	Tag      string // seeds the background keys: NewKey(Tag + " noise " + n)
	Rounds   int    // blocks mined, one a round
	NoisePer int    // background payments a block, from coinbases
	Wallets  []*LabelledWallet
	Events   map[int][]WalletEvent // by round, from 0

	// Shaped, when above 0, is how many background transactions a
	// block holds beside its payments from a coinbase, once 40
	// background outputs are unspent, in place of the one spend of one
	// output to one: each spends background outputs and pays new ones
	// in a shape drawn from Shapes (MainnetShapes when nil), by a
	// source seeded with Tag, so that other users transact as real
	// wallets do rather than in a single shape.
	Shaped int
	Shapes []TxShape
}

// LabelledChain is a chain BuildLabelledChain mined: its wallets, and
// the heights every address appeared at (paid, or spent from).
type LabelledChain struct {
	Start, Tip int32
	Wallets    []*LabelledWallet
	Heights    map[string][]int32
}

// labelledBuilder mines a labelled chain on a node.
type labelledBuilder struct {
	t       testing.TB
	node    *Node
	spec    LabelledChainSpec
	keys    int
	pending []Output // background outputs not yet spent
	bank    []Output // funds for the rounds the late coinbases cannot pay
	chain   *LabelledChain
	rng     *rand.Rand // draws the shaped transactions, seeded by Tag
}

// BuildLabelledChain mines spec's rounds on node, whose mining key must
// have mature coinbases for them (Generate 100 blocks and a few more
// first): every block holds NoisePer background payments from a coinbase
// (and, once 40 are unspent, a spend of one of them), and the wallets'
// payments and spends of its round. When the coinbases of the last
// rounds cannot pay them (regtest halves the subsidy every 150 blocks),
// round 0 also funds a bank from early coinbases, which pays what the
// coinbases no longer can. It fails the test if the node mines
// anything else.
func BuildLabelledChain(t testing.TB, node *Node, spec LabelledChainSpec) *LabelledChain {
	t.Helper()
	b := &labelledBuilder{t: t, node: node, spec: spec, chain: &LabelledChain{Wallets: spec.Wallets, Heights: map[string][]int32{}}}
	seed := fnv.New64a()
	seed.Write([]byte(spec.Tag))
	b.rng = rand.New(rand.NewPCG(seed.Sum64(), 0))
	b.chain.Start = b.height() + 1
	b.build()
	b.chain.Tip = b.height()
	for _, w := range spec.Wallets {
		for _, k := range slices.Concat(w.Receive, w.Change[:len(w.Payees)]) {
			if a := b.addr(k); !slices.Contains(w.Scripts, a) {
				w.Scripts = append(w.Scripts, a)
			}
		}
	}
	return b.chain
}

func (b *labelledBuilder) fresh(tag string) *Key {
	b.keys++
	return NewKey(fmt.Sprintf("%s %s %d", b.spec.Tag, tag, b.keys))
}

func (b *labelledBuilder) addr(k *Key) string { return k.Address(b.node.Params).EncodeAddress() }

func (b *labelledBuilder) seen(k *Key, h int32) {
	a := b.addr(k)
	if hs := b.chain.Heights[a]; len(hs) == 0 || hs[len(hs)-1] != h {
		b.chain.Heights[a] = append(hs, h)
	}
}

func (b *labelledBuilder) height() int32 {
	n, err := b.node.RPC().GetBlockCount()
	if err != nil {
		b.t.Fatal(err)
	}
	return int32(n)
}

// build mines the rounds.
func (b *labelledBuilder) build() {
	received := map[*LabelledWallet][]Output{}
	payerCoin := map[*Key]*Output{}
	for round := range b.spec.Rounds {
		h := b.height() + 1
		txs := b.noise(round, h)
		for _, e := range b.spec.Events[round] {
			w := e.Wallet
			if e.Spend {
				in := received[w][0]
				received[w] = received[w][1:]
				payee, change := b.fresh("payee"), w.Change[len(w.Payees)]
				tx := b.node.Spend(b.t, []Output{in}, wire.NewTxOut(payeeValue, payee.PkScript()),
					wire.NewTxOut(in.Value-payeeValue-Fee, change.PkScript()))
				txs = append(txs, tx)
				w.Payees = append(w.Payees, b.addr(payee))
				b.seen(in.Key, h)
				b.seen(payee, h)
				b.seen(change, h)
				continue
			}
			payer := w.Payers[e.Payment%len(w.Payers)]
			to, newChange := w.Receive[e.Payment], b.fresh("payer change")
			var tx *wire.MsgTx
			if prev := payerCoin[payer]; prev != nil {
				tx = b.node.Spend(b.t, []Output{*prev}, wire.NewTxOut(2*payeeValue, to.PkScript()),
					wire.NewTxOut(prev.Value-2*payeeValue-Fee, newChange.PkScript()))
				b.seen(prev.Key, h)
			} else {
				tx = b.fund(wire.NewTxOut(2*payeeValue, to.PkScript()), wire.NewTxOut(40*payeeValue, newChange.PkScript()))
			}
			txs = append(txs, tx)
			o := OutputOf(tx, 1, newChange)
			payerCoin[payer] = &o
			received[w] = append(received[w], OutputOf(tx, 0, to))
			w.PayerChange = append(w.PayerChange, b.addr(newChange))
			b.seen(to, h)
			b.seen(newChange, h)
		}
		b.node.Confirm(b.t, txs...)
		if got := b.height(); got != h {
			b.t.Fatalf("round %d mined height %d, want %d", round, got, h)
		}
	}
}

// payeeValue is what a payee gets, in satoshis; a wallet is paid twice it.
const payeeValue = 1_000_000

// bankOutput is the most one funding output of the bank holds.
const bankOutput = 40 * 100_000_000

// fillBank funds the bank, in round 0's block, when the coinbases of the
// last rounds pay less than a round's background payments (regtest
// halves the subsidy every 150 blocks): enough for every round, from
// the early coinbases.
func (b *labelledBuilder) fillBank() []*wire.MsgTx {
	perRound := int64(b.spec.NoisePer)*payeeValue + 2*Fee
	last := b.chain.Start + int32(b.spec.Rounds) - int32(b.node.Params.CoinbaseMaturity)
	if blockchain.CalcBlockSubsidy(last, b.node.Params) >= perRound+Fee {
		return nil
	}
	key := NewKey(b.spec.Tag + " bank")
	var txs []*wire.MsgTx
	for need := int64(b.spec.Rounds) * perRound; need > 0; need -= bankOutput {
		tx := b.node.SpendCoinbase(b.t, wire.NewTxOut(min(need, bankOutput), key.PkScript()))
		txs = append(txs, tx)
		b.bank = append(b.bank, OutputOf(tx, 0, key))
	}
	return txs
}

// fund pays outs from a coinbase, or from the bank once no coinbase can:
// outs keep their indexes, and the bank's change comes last.
func (b *labelledBuilder) fund(outs ...*wire.TxOut) *wire.MsgTx {
	tx, err := b.node.SpendCoinbaseErr(outs...)
	if err == nil {
		return tx
	}
	var need int64 = Fee
	for _, o := range outs {
		need += o.Value
	}
	for len(b.bank) > 0 && b.bank[0].Value < need {
		b.bank = b.bank[1:]
	}
	if len(b.bank) == 0 {
		b.t.Fatalf("%v, and the bank is empty", err)
	}
	in := b.bank[0]
	all := append(slices.Clone(outs), wire.NewTxOut(in.Value-need, in.Key.PkScript()))
	tx = b.node.Spend(b.t, []Output{in}, all...)
	b.bank[0] = OutputOf(tx, uint32(len(outs)), in.Key)
	return tx
}

// noise sends a round's background payments.
func (b *labelledBuilder) noise(round int, h int32) []*wire.MsgTx {
	var outs []*wire.TxOut
	var keys []*Key
	for range b.spec.NoisePer {
		k := b.fresh("noise")
		keys = append(keys, k)
		outs = append(outs, wire.NewTxOut(payeeValue, k.PkScript()))
	}
	noise := b.fund(outs...)
	txs := []*wire.MsgTx{noise}
	if round == 0 {
		txs = append(txs, b.fillBank()...)
	}
	for i, k := range keys {
		b.seen(k, h)
		b.pending = append(b.pending, OutputOf(noise, uint32(i), k))
	}
	if len(b.pending) > 40 && b.spec.Shaped > 0 {
		txs = append(txs, b.shaped(h)...)
	} else if len(b.pending) > 40 {
		in := b.pending[round*7%len(b.pending)]
		b.pending = slices.DeleteFunc(b.pending, func(o Output) bool { return o.OutPoint == in.OutPoint })
		to := b.fresh("noise")
		txs = append(txs, b.node.Spend(b.t, []Output{in}, wire.NewTxOut(in.Value-Fee, to.PkScript())))
		b.seen(in.Key, h)
		b.seen(to, h)
	}
	return txs
}

// WalletChain is the shape of a chain with one labelled wallet: Blocks
// blocks in all, of which the wallet's Scripts scripts appear in
// WalletBlocks.
type WalletChain struct {
	Blocks, WalletBlocks, Scripts int
}

// Wallet chains: the long one, the default suite's, on which the leak
// of a client's downloads is quoted, and a short one for a quicker run
// by hand (SPVFILTER_WALLET_CHAIN=short).
var (
	ShortWalletChain = WalletChain{Blocks: 450, WalletBlocks: 24, Scripts: 20}
	LongWalletChain  = WalletChain{Blocks: 2000, WalletBlocks: 40, Scripts: 20}
)

// WalletChainFromEnv is LongWalletChain, or ShortWalletChain when the
// environment variable SPVFILTER_WALLET_CHAIN is "short"; "long" names
// the default, and any other value fails the test.
func WalletChainFromEnv(t testing.TB) WalletChain {
	t.Helper()
	switch v := os.Getenv("SPVFILTER_WALLET_CHAIN"); v {
	case "", "long":
		return LongWalletChain
	case "short":
		return ShortWalletChain
	default:
		t.Fatalf("SPVFILTER_WALLET_CHAIN=%q: want unset, \"long\" or \"short\"", v)
		return WalletChain{}
	}
}

// matureBlocks are the blocks mined before a wallet chain's rounds, so
// that coinbases are there to spend.
const matureBlocks = 150

// Spec is a spec for the chain's shape on a node that has mined nothing
// yet: matureBlocks blocks to mine first, then rounds up to Blocks, four
// background payments a block, and one wallet (birth: the first round)
// whose scripts are half receive keys and half the change of its spends;
// it is paid WalletBlocks − Scripts/2 times, each by a payer of its own
// (so that payers' change does not chain its payments together), to its
// receive keys in turn, and spends the oldest it holds after each
// payment that keeps the spends level with the payments, in evenly
// spaced rounds. Scripts must be at least 2 and WalletBlocks at least
// Scripts.
func (s WalletChain) Spec(tag string) (mature int, spec LabelledChainSpec) {
	spends := s.Scripts / 2
	receive := s.Scripts - spends
	payments := s.WalletBlocks - spends
	w := &LabelledWallet{ID: tag, Birth: matureBlocks + 1}
	for i := range receive {
		w.Receive = append(w.Receive, NewKey(fmt.Sprintf("%s wallet receive %d", tag, i)))
	}
	for i := range spends {
		w.Change = append(w.Change, NewKey(fmt.Sprintf("%s wallet change %d", tag, i)))
	}
	var order []WalletEvent
	for j := range payments {
		w.Payers = append(w.Payers, NewKey(fmt.Sprintf("%s payer %d", tag, j)))
		if j >= receive {
			w.Receive = append(w.Receive, w.Receive[j%receive])
		}
		order = append(order, WalletEvent{Wallet: w, Payment: j})
		if done := len(order) - j - 1; done < (j+1)*spends/payments {
			order = append(order, WalletEvent{Wallet: w, Spend: true})
		}
	}
	rounds := s.Blocks - matureBlocks
	spec = LabelledChainSpec{Tag: tag, Rounds: rounds, NoisePer: 4, Wallets: []*LabelledWallet{w}, Events: map[int][]WalletEvent{}}
	for i, e := range order {
		r := 2 + i*(rounds-4)/len(order)
		spec.Events[r] = append(spec.Events[r], e)
	}
	return matureBlocks, spec
}
