package neutrinobench

import (
	"context"
	"fmt"
	"net"

	"github.com/btcsuite/btcd/chaincfg"
)

// scanSpvfilterConns returns spvfilter's scan with conns connections to
// each node where the client would make one: it is given conns names
// for each address, which its dialer maps back to the address, so that
// it takes them for as many peers (it tells nodes apart by their
// addresses, and a dialer's connections by nothing) and spreads the
// filters over them. A prototype of a client that opens several
// connections to one node, measured against the same nodes as the
// others; the client cross-checks the aliases' filter headers as it
// would different nodes'.
func scanSpvfilterConns(conns int) scanFunc {
	return func(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (*ScanStats, error) {
		target := map[string]string{}
		var names []string
		for i, a := range addrs {
			_, port, err := net.SplitHostPort(a)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", a, err)
			}
			for j := 0; j < conns; j++ {
				name := net.JoinHostPort(fmt.Sprintf("conn%d.node%d.invalid", j, i), port)
				target[name] = a
				names = append(names, name)
			}
		}
		return scanSpvfilterVia(ctx, names, target, params, watch, from, to, nil)
	}
}
