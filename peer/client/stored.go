package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/peer/store"
)

// StoredPeers is what a data directory keeps about peers: its address
// book and the bans in force.
type StoredPeers struct {
	Known []addrbook.Known
	Bans  []pool.Ban
	// Notes say what was wrong with the files, and what became of them.
	Notes []string
}

// ReadStoredPeers reads the address book and the bans kept in the data
// directory dataDir for params' network, without connecting to any peer,
// after lifting the bans of unban (host:port addresses), if any. The
// store is opened for it, so a client using the directory at the same
// time makes it fail (store.ErrLocked); a directory that does not hold
// the network yet is reported as holding nothing, and is not created.
func ReadStoredPeers(dataDir string, params *chaincfg.Params, unban ...string) (*StoredPeers, error) {
	dir := filepath.Join(dataDir, params.Name)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		out := &StoredPeers{Notes: []string{fmt.Sprintf("%s holds no state of %s yet", dataDir, params.Name)}}
		if len(unban) > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("no ban to lift for %v", unban))
		}
		return out, nil
	}
	st, err := store.Open(dataDir, params)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer st.Close()
	bans, notes := pool.OpenBanList(st.Dir())
	defer bans.Close()
	for _, addr := range unban {
		if err := bans.Unban(addr); err != nil {
			return nil, fmt.Errorf("client: unban %s: %w", addr, err)
		}
	}
	out := &StoredPeers{Bans: bans.Bans(), Notes: append(st.Recovered(), notes...)}
	known, notes, err := addrbook.Read(params, st.Dir())
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	out.Known, out.Notes = known, append(out.Notes, notes...)
	return out, nil
}
