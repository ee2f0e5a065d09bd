package btcwallet

import (
	"os"
	"testing"

	"github.com/btcsuite/btclog"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/snacl"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wallet"
	"github.com/lightninglabs/neutrino"
)

// logEnv names the environment variable that sends the logs of btcwallet,
// its chain package and neutrino to the standard error at the given level
// (trace, debug, info, ...), to see what a failing run did.
const logEnv = "SPVFILTER_WALLET_LOG"

func TestMain(m *testing.M) {
	// The wallets of the tests encrypt their keys with btcwallet's own
	// test parameters for scrypt (waddrmgr.FastScryptOptions) instead
	// of the default 2^18 rounds, which would cost a second and 256 MiB
	// for every wallet created.
	waddrmgr.SetSecretKeyGen(fastSecretKey)
	if level, ok := btclog.LevelFromString(os.Getenv(logEnv)); ok && os.Getenv(logEnv) != "" {
		backend := btclog.NewBackend(os.Stderr)
		for sub, use := range map[string]func(btclog.Logger){
			"WLLT": wallet.UseLogger, "CHNS": chain.UseLogger, "BTCN": neutrino.UseLogger,
		} {
			l := backend.Logger(sub)
			l.SetLevel(level)
			use(l)
		}
	}
	os.Exit(m.Run())
}

func fastSecretKey(passphrase *[]byte, _ *waddrmgr.ScryptOptions) (*snacl.SecretKey, error) {
	o := waddrmgr.FastScryptOptions
	return snacl.NewSecretKey(passphrase, o.N, o.R, o.P)
}
