package neutrinobench

import (
	"fmt"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// StartNodes starts n btcd nodes that serve the chain and returns them; the
// caller stops them (Node.Stop).
//
// The first node gets the cached blocks by submitblock. The cached chain's
// timestamps lie in the past and btcd ignores getheaders while its tip is
// more than a day old, so it then mines one block dated now. The other
// nodes start empty, connected only to the first, and sync the chain from
// it over the peer-to-peer protocol; StartNodes waits until all of them
// have the same tip, at height Spec.Blocks+1.
func StartNodes(c *Chain, n int) (nodes []*peertest.Node, err error) {
	return StartNodesWith(c, n, nil)
}

// StartNodesWith is StartNodes with args(i) passed to node i's btcd as
// extra flags (args may be nil), such as a CPU profile of each node
// (--cpuprofile, written when the node stops).
func StartNodesWith(c *Chain, n int, args func(i int) []string) (nodes []*peertest.Node, err error) {
	if n < 1 {
		return nil, fmt.Errorf("neutrinobench: %d nodes", n)
	}
	defer func() {
		if err != nil {
			for _, node := range nodes {
				node.Stop()
			}
			nodes = nil
		}
	}()
	argsOf := func(i int) []string {
		if args == nil {
			return nil
		}
		return args(i)
	}
	first, err := peertest.Start(peertest.WithArgs(argsOf(0)...))
	if err != nil {
		return nil, err
	}
	nodes = append(nodes, first)
	if err := c.replay(first); err != nil {
		return nodes, err
	}
	if _, err := first.GenerateErr(1); err != nil {
		return nodes, err
	}
	for i := 1; i < n; i++ {
		node, err := peertest.Start(peertest.WithArgs(append([]string{"--connect=" + first.P2PAddr}, argsOf(i)...)...))
		if err != nil {
			return nodes, err
		}
		nodes = append(nodes, node)
	}
	return nodes, waitSynced(nodes, int64(c.Spec.Blocks)+1, syncStall)
}

// syncStall is how long a node syncing the chain may go without a new
// block before StartNodes gives up on it: on a loaded machine a node
// validates a few blocks a second at worst, so only a node that stopped
// takes that long.
const syncStall = time.Minute

// waitSynced waits until every node's best block is the first node's, at
// height tip, as long as each gets a new block within stall.
func waitSynced(nodes []*peertest.Node, tip int64, stall time.Duration) error {
	want, err := nodes[0].RPC().GetBestBlockHash()
	if err != nil {
		return fmt.Errorf("neutrinobench: getbestblockhash: %w", err)
	}
	if n, err := nodes[0].RPC().GetBlockCount(); err != nil || n != tip {
		return fmt.Errorf("neutrinobench: node at height %d (%v), expected %d", n, err, tip)
	}
	for i, node := range nodes[1:] {
		height, since := int64(-1), time.Now()
		for {
			got, err := node.RPC().GetBestBlockHash()
			if err == nil && *got == *want {
				break
			}
			if n, err := node.RPC().GetBlockCount(); err == nil && n > height {
				height, since = n, time.Now()
			}
			if time.Since(since) > stall {
				return fmt.Errorf("neutrinobench: node %d (%s) did not reach block %v at height %d: no new block for %v at height %d (best %v, %v)",
					i+1, node.P2PAddr, want, tip, stall, height, got, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// Addrs returns the nodes' peer-to-peer addresses.
func Addrs(nodes []*peertest.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.P2PAddr
	}
	return out
}
