package store

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/btcsuite/btcd/chaincfg"
)

// ReadLock readies a reader of the files kept in the directory of
// params' network in dataDir that writes nothing (a listing of what the
// directory holds) and creates nothing. It takes a shared lock on the
// store if one was ever opened there, so that it fails with ErrLocked
// while a store is open on the directory, and no store opens before
// unlock; and it checks the store's identity file, if any
// (ErrWrongNetwork).
func ReadLock(dataDir string, params *chaincfg.Params) (unlock func() error, err error) {
	dir := filepath.Join(dataDir, params.Name)
	unlock = func() error { return nil }
	lock, err := lockShared(filepath.Join(dir, lockName))
	switch {
	case err == nil:
		unlock = lock.Close
	case !errors.Is(err, fs.ErrNotExist):
		return nil, storeErr(err)
	}
	if _, _, err := compareMeta(dir, params); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}
