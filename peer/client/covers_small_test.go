package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// smallWallets are wallets of two scripts, a receive key and the
// change of its one spend, each on a chain of its own beside the other
// users' wallets of the covers' chain (buildCovers): the key paid once
// (seen twice, its chain of the class the covers' chains most often
// miss in size), and paid twice (seen three times).
var smallWallets = []peertest.WalletChain{
	{Blocks: 450, WalletBlocks: 2, Scripts: 2},
	{Blocks: 450, WalletBlocks: 3, Scripts: 2},
}

// smallClients is how many clients TestCoverSmallWallet runs, unless
// SPVFILTER_SMALL_CLIENTS says more.
const smallClients = 8

// TestCoverSmallWallet: a covered wallet of two scripts against the
// block-download attack on the client's own record (leak.Compute, each
// peer and all colluding), sessions of clients of their own until the
// covers meet the target 0.5. Told the target (the cover-aware attack),
// no view gives a watched script's group more than the target; not
// told, the attack's highest group probability and the wallet's and
// covers' group sizes are logged, with the AUC of group size pooled
// over the clients (SPVFILTER_SMALL_CLIENTS runs more):
//
//	SPVFILTER_SMALL_CLIENTS=32 go test ./peer/client -run TestCoverSmallWallet -v
//
// 32 clients, one run: the key paid once (a chain of two appearances,
// in a group of 4) met the target at the 2nd session (64 sessions) with
// 3.44 cover blocks a wallet block; the covers' group size against the
// wallet's, AUC 0.469 [0.375, 0.562]; not told the target, the attack
// put 62 of the 64 watched scripts and 44 of the 64 covers in groups at
// 0.95 or more (0.58 of its claims right). Paid twice (three
// appearances, a group of 5): 72 sessions, 1.06 cover blocks a wallet
// block, AUC 0.500; not told, 64 of 64 watched scripts and 45 of 45
// covers at 0.95 or more (0.59 right). Told the target, no view of
// either gave a group more than 0.5.
func TestCoverSmallWallet(t *testing.T) {
	for _, shape := range smallWallets {
		t.Run(fmt.Sprintf("paid %d times", shape.WalletBlocks-1), func(t *testing.T) { coverSmallWallet(t, shape) })
	}
}

// coverSmallWallet is TestCoverSmallWallet for a wallet of shape.
func coverSmallWallet(t *testing.T, shape peertest.WalletChain) {
	node := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey("small miner")))
	f := buildCovers(t, node, shape, fmt.Sprintf("small %d", shape.WalletBlocks), 0, 0, 0)
	t.Logf("the wallet's scripts by appearances %v; the other wallets' %v", byAppearances(f, f.chain.Wallets[:1]), byAppearances(f, f.chain.Wallets[1:]))
	clients := clientsFrom("SPVFILTER_SMALL_CLIENTS", smallClients)
	const target = 0.5
	var perWallet, perCovers [][]float64
	var toldHigh, plainHigh []float64
	plainLikely, sessions, walletBlocks, coverBlocks := 0, 0, 0, 0
	plainConfident, coverConfident, coverScripts := 0, 0, 0
	for i := range clients {
		relays := relaysTo(t, f, 2)
		dir := t.TempDir()
		var k *CoverCost
		var told, plain *leak.Leak
		var covers []float64
		coversConfident := 0
		n := 0
		for session := 1; session <= maxSessionsToTarget && (k == nil || !k.Met); session++ {
			sessions, n = sessions+1, session
			_, err := coverRun{dir: dir, target: target, leak: true, after: func(c *Client, res *ScanResult) {
				k = res.Cover
				if !k.Met {
					return
				}
				told = res.Leak
				var err error
				if plain, err = c.leakOf(context.Background(), newScanLog(), f.watch, false); err != nil {
					t.Fatal(err)
				}
				l := coversLeak(t, c)
				covers = groupSizes(l)
				coversConfident = l.Collusion.GroupConfident
			}}.scan(t, f, relays)
			if err != nil && !isShort(err) {
				t.Fatal(err)
			}
		}
		if k == nil || !k.Met {
			t.Fatalf("client %d: the target was not met in %d sessions: %+v", i, maxSessionsToTarget, k)
		}
		views := append([]*leak.PeerLeak{&told.Collusion}, ptrs(told.Peers)...)
		high := 0.0
		for _, v := range views {
			if g := highestGroup(v); g > target+1e-9 {
				t.Errorf("client %d: told the target %g, a view gives a watched script's group %.3f", i, target, g)
			}
			high = max(high, highestGroup(v))
		}
		toldHigh = append(toldHigh, high)
		plainHigh = append(plainHigh, highestGroup(&plain.Collusion))
		plainLikely += plain.Collusion.GroupLikely
		plainConfident += plain.Collusion.GroupConfident
		coverConfident += coversConfident
		coverScripts += len(covers)
		w := groupSizes(told)
		perWallet, perCovers = append(perWallet, w), append(perCovers, covers)
		walletBlocks, coverBlocks = walletBlocks+k.WalletBlocks, coverBlocks+k.CoverBlocks
		t.Logf("client %d: met at session %d with %d covers, %d wallet and %d cover blocks; told the target, highest group %.3f; not told, colluding: highest group %.3f, %d of the wallet's scripts in groups at 0.5 or more, %d at 0.95 or more (covers: %d); group sizes: wallet %v, covers %v",
			i, n, len(covers), k.WalletBlocks, k.CoverBlocks, high, highestGroup(&plain.Collusion), plain.Collusion.GroupLikely, plain.Collusion.GroupConfident, coversConfident, w, covers)
	}
	a, lo, hi := pooledAUC(perWallet, perCovers, bootstrapDraws)
	t.Logf("%d clients, %d sessions: %.2f cover blocks a wallet block; told the target, highest group %.3f at most; not told, colluding: highest group %.3f at most, mean %.3f, %d of %d wallet scripts in groups at 0.5 or more; scripts in groups at 0.95 or more: %d of the wallet's, %d of %d covers' (the share of those that are the wallet's is what the attack's 0.95 is worth); group size AUC pooled %.3f [%.3f, %.3f]",
		clients, sessions, float64(coverBlocks)/float64(max(walletBlocks, 1)), maxOf(toldHigh), maxOf(plainHigh), mean(plainHigh), plainLikely, 2*clients, plainConfident, coverConfident, coverScripts, a, lo, hi)
}

// maxOf is the largest of xs (0 for none).
func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
