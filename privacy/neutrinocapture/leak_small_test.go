package neutrinocapture

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// smallWallets are the wallets of two scripts of TestLeakSmallAgainstCapture,
// a receive key and the change of its one spend, as peer/client's
// TestCoverSmallWallet shapes them: the key paid once (seen twice) and
// paid twice (seen three times), each on a chain of its own beside the
// other users' wallets of leakChain.
var smallWallets = []peertest.WalletChain{
	{Blocks: 450, WalletBlocks: 2, Scripts: 2},
	{Blocks: 450, WalletBlocks: 3, Scripts: 2},
}

// TestLeakSmallAgainstCapture is the second half of TestLeakAgainstCapture
// for wallets of two scripts (smallWallets), whose few blocks are what
// covers most often fail to hide: each wallet, beside other users'
// wallets, is scanned through two capture relays without protection,
// where the attack on the captures must give a watched script more than
// 0.5 (exposed), and with --privacy-target 0.5 over two peers, session
// after session over one data directory until the client says its
// covers met the target, where the attack told the target must give no
// watched script nor group above 0.5 at either peer or both colluding,
// and the client's report of that session must agree with the attack
// on its capture (protected). The table logged gives per scan the
// blocks scanned and fetched, the blocks fetched beyond the wallet's a
// wallet block (from the captures, over all sessions: the covers' and
// those a session short of them explored) and the highest P of a
// watched script and of its group per view:
//
//	go test -run TestLeakSmallAgainstCapture -v
//
// Five runs: without protection each peer saw one or two of the
// wallet's blocks and gave no watched script any P, and colluding the
// attack gave a watched script 0.484 (paid once) or 0.500 (twice) and
// its group 0.969. With the target met at the 2nd session (paid once,
// 5 of 5 runs) or the 2nd to 4th (twice), the client's covers cost 1.00
// cover block a wallet block in the session that met it, and the
// captures held 4.50 (once) and 3.33 to 15.33 (twice) blocks beyond the
// wallet's a wallet block over all sessions; no peer gave a watched
// script any P, colluding 0.250 and its group 0.500, and the client's
// report agreed with the attack at every view. Run with the protected
// check on the scan without protection, the test fails at the
// colluding view (group 0.969 above 0.5).
func TestLeakSmallAgainstCapture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| wallet | scan | capture sessions | B | F | wallet blocks | blocks beyond the wallet's, a wallet block | highest P, script / group: peer 1 | peer 2 | colluding |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
	var agree []agreeRow
	for _, shape := range smallWallets {
		paid := fmt.Sprintf("paid %d times", shape.WalletBlocks-1)
		dir := fmt.Sprintf("small-%d", shape.WalletBlocks-1)
		t.Run(paid, func(t *testing.T) {
			node, chain, index, hashes := leakChain(t, shape, otherWallets)
			for _, sc := range []leakScan{
				{name: "spvfilter, no protection, " + paid, dir: dir, relays: 2, scan: spvfilterScan, check: exposed},
				{name: "spvfilter, --privacy-target 0.5, " + paid, dir: dir + "-covered", relays: 2, target: protectedTarget,
					scan: protectedScan(protectedTarget), check: protected},
			} {
				row := measureLeak(ctx, t, sc, node, chain, index, hashes)
				sc.check(t, shape, row)
				agree = append(agree, row.agree...)
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %s |\n", paid, sc.name, row.sessions, row.scanned, row.fetched,
					walletBlocks(chain), coverRatio(row.fetched, walletBlocks(chain)), viewsHighest(row.agree))
			}
		})
	}
	t.Log(b.String())
	t.Log(agreeTable(agree))
}

// walletBlocks is how many blocks from the labelled wallet's birth hold
// one of its scripts.
func walletBlocks(chain *peertest.LabelledChain) uint64 {
	w := chain.Wallets[0]
	seen := map[int32]bool{}
	for _, a := range w.Scripts {
		for _, h := range chain.Heights[a] {
			if h >= w.Birth {
				seen[h] = true
			}
		}
	}
	return uint64(len(seen))
}

// coverRatio prints the blocks fetched beyond the wallet's, a wallet
// block.
func coverRatio(fetched, wallet uint64) string {
	if wallet == 0 || fetched < wallet {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(fetched-wallet)/float64(wallet))
}

// viewsHighest prints the attack's highest P of a watched script and
// of its group in each view (peer 1, peer 2, colluding) as table cells.
func viewsHighest(rows []agreeRow) string {
	cells := map[string]string{}
	for _, r := range rows {
		cells[r.view] = fmt.Sprintf("%.3f / %.3f", r.attack.highest, r.attack.groupHighest)
	}
	var out []string
	for _, v := range []string{"peer 1", "peer 2", "colluding"} {
		c, ok := cells[v]
		if !ok {
			c = "-"
		}
		out = append(out, c)
	}
	return strings.Join(out, " | ")
}
