package client

import (
	"context"

	"github.com/btcsuite/btcd/wire"
)

// ScanBIP157 scans the blocks req.From..req.To with BIP 157 basic compact
// filters, as the package documentation describes. Before it starts and
// whenever a request fails, it syncs the headers of every peer: if the
// chain has reorganized, the scan starts again on the new chain, the
// blocks that left it are listed in ScanResult.Disconnected, and the
// failed peer is not blamed; otherwise a peer that lied is banned, one that
// stalled or disconnected is dropped, and the scan goes on with the others.
//
// A spend is found when it spends an output found earlier in the scan or a
// watched outpoint, or shows the key or script of a watched P2PKH,
// P2WPKH, P2SH or P2WSH output, or the leaf script and control block of
// a P2TR script-path spend; a block whose filter matched only through an
// output it spends without showing its script (a P2TR key-path, P2PK or
// bare multisig spend) is listed in SpendOnlyBlocks, never counted as a
// false positive.
func (c *Client) ScanBIP157(ctx context.Context, req ScanRequest) (*ScanResult, error) {
	wl := newWatchList(req.Watch)
	return c.scan(ctx, req, "bip157", wire.SFNodeCF, func(ctx context.Context, log *scanLog, req ScanRequest) (*ScanResult, error) {
		return c.scanBIP157(ctx, log, req, wl)
	})
}
