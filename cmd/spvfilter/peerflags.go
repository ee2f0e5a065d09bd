package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/pflag"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/store"
)

// peerFlags are the flags that say which nodes a command talks to.
type peerFlags struct {
	peers, connect []string
	proxy          string
}

func (pf *peerFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&pf.peers, "peer", nil, "a node's `HOST:PORT`, used beside the peers found through the network's DNS seeds (repeatable; required on regtest and simnet, which have none; default: none, the DNS seeds alone)")
	f.StringArrayVar(&pf.connect, "connect", nil, "a node's `HOST:PORT` to use alone: no DNS seeds, no peers learnt from others (repeatable; default: none, peers are --peer and those the DNS seeds give)")
	f.StringVar(&pf.proxy, "proxy", "", "a SOCKS5 proxy `URL` every connection goes through, such as Tor's socks5://127.0.0.1:9050 (host names and .onion addresses resolved by it; no DNS seed is asked; default: none, direct connections)")
}

// config checks the flags and fills in the peers of a client
// configuration for params, whose peers must offer services.
func (pf *peerFlags) config(params *chaincfg.Params, services wire.ServiceFlag) (client.Config, error) {
	cfg := client.Config{Params: params, Proxy: pf.proxy, Services: services}
	if len(pf.peers) > 0 && len(pf.connect) > 0 {
		return cfg, badInput("--peer and --connect: give --peer (used beside the peers found) or --connect (used alone), not both")
	}
	cfg.Peers, cfg.ConnectOnly = pf.peers, false
	flag := "--peer"
	if len(pf.connect) > 0 {
		cfg.Peers, cfg.ConnectOnly, flag = pf.connect, true, "--connect"
	}
	for _, p := range cfg.Peers {
		host, port, err := net.SplitHostPort(p)
		if err != nil || host == "" || port == "" {
			return cfg, badInput("%s %q: want HOST:PORT", flag, p)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return cfg, badInput("%s %q: port %q is not a TCP port", flag, p, port)
		}
	}
	for _, p := range cfg.Peers {
		if host, _, _ := net.SplitHostPort(p); strings.HasSuffix(host, ".onion") && pf.proxy == "" {
			return cfg, badInput("%s %s: an onion address needs --proxy, such as Tor's socks5://127.0.0.1:9050", flag, p)
		}
	}
	if len(cfg.Peers) == 0 && len(params.DNSSeeds) == 0 {
		return cfg, badInput("no node given: %s has no DNS seeds to find nodes with; give a node with --connect HOST:PORT", params.Name)
	}
	if len(cfg.Peers) == 0 && pf.proxy != "" {
		return cfg, badInput("--proxy without --peer or --connect: the DNS seeds are not asked behind a proxy (their lookup would leave it)")
	}
	if pf.proxy != "" {
		if err := checkProxy(pf.proxy); err != nil {
			return cfg, err
		}
		if _, err := peer.SOCKS5(pf.proxy); err != nil {
			return cfg, badInputWords("--proxy", err)
		}
	}
	return cfg, nil
}

// checkProxy checks a --proxy URL before anything connects: the scheme
// socks5 (or socks5h), an optional user:password@ and a HOST:PORT as
// --peer takes it. The password is never shown.
func checkProxy(raw string) error {
	const want = "want socks5://HOST:PORT, such as Tor's socks5://127.0.0.1:9050"
	if !strings.Contains(raw, "://") {
		shown := fmt.Sprintf(" %q", raw)
		if strings.Contains(raw, "@") {
			shown = "" // it may hold a password
		}
		return badInput("--proxy%s: %s (the scheme socks5:// is missing)", shown, want)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		shown := fmt.Sprintf(" %q", raw)
		if strings.Contains(raw, "@") {
			shown = "" // it may hold a password
		}
		return usageError{&restated{fmt.Sprintf("--proxy%s: not a URL%s: %s", shown, urlProblem(err), want), err}}
	case u.Scheme != "socks5" && u.Scheme != "socks5h":
		return badInput("--proxy %s: scheme %q: %s", u.Redacted(), u.Scheme, want)
	case u.Opaque != "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return badInput("--proxy %s: %s", u.Redacted(), want)
	}
	if err := checkHostPort(u.Host, false); err != nil {
		why, _, _ := strings.Cut(err.Error(), "; want")
		return usageError{&restated{fmt.Sprintf("--proxy %s: %s; %s", u.Redacted(), why, want), err}}
	}
	return nil
}

// urlProblem says, in parentheses after a space, what url.Parse refused
// in a URL, for the mistakes of a host and port; "" for others.
func urlProblem(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return ""
	}
	switch msg := ue.Err.Error(); {
	case msg == "missing ']' in host":
		return " (an IPv6 address opened with [ has no ])"
	case strings.HasPrefix(msg, "invalid port "):
		return " (the port is not a number)"
	case strings.HasPrefix(msg, "invalid character "):
		return " (a character no host name has, a space say)"
	}
	return ""
}

// makeDataDir creates the --datadir dir if needed (see makeDir): for
// the default data directory; one the user names is checked first by
// needDataDir.
func makeDataDir(dir string) error { return makeDir("--datadir", dir) }

// needDataDir refuses, as bad input, a data directory the user named with
// --datadir that does not exist, naming the part of its path that is
// missing: as bitcoind's -datadir, a directory given must exist, so that a
// mistyped path is refused rather than started anew (headers synced again,
// an empty address book and ban list). It creates nothing; "" (none) and a
// directory that exists pass, a file in its place is refused as checkDir
// refuses it, and what else keeps it from being used is left to makeDir.
func needDataDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := checkDir("--datadir", dir); err != nil {
		return err
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	const how = "a data directory given must exist: create it to start a new one there, or leave out --datadir for the default one"
	missing := dir
	for above := filepath.Dir(missing); above != missing; above = filepath.Dir(missing) {
		if _, err := os.Stat(above); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = above
	}
	if missing == dir {
		return badInput("--datadir %s: no such directory: %s", dir, how)
	}
	return badInput("--datadir %s: no such directory (%s does not exist): %s", dir, missing, how)
}

// notNetworkDir refuses, as bad input, a --datadir dir given that is
// itself the directory one network's state was kept in under another data
// directory (DIR/regtest, holding headers.bin): the client keeps each
// network's state in DIR/NETWORK, so such a dir would start a new state
// in dir/NETWORK, syncing anew beside the one meant, without a word. A
// dir that holds a state of params's network already (dir/NETWORK) is
// used as it is.
func notNetworkDir(dir string, params *chaincfg.Params) error {
	if dir == "" {
		return nil
	}
	clean := filepath.Clean(dir)
	base, parent := filepath.Base(clean), filepath.Dir(clean)
	if !slices.Contains(networkList(), base) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(clean, store.HeadersFile)); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(clean, params.Name)); err == nil {
		return nil
	}
	return badInput("--datadir %s: it is the %s state of the data directory %s (it holds %s): a data directory keeps each network's state in a directory of its own, %s for %s, so this one would start a new %s state in %s: give --datadir %s",
		dir, base, parent, store.HeadersFile, filepath.Join(parent, params.Name), params.Name, params.Name, filepath.Join(clean, params.Name), parent)
}

// checkDir refuses, as bad input, a file in the place of the directory
// dir a flag names, or in the place of a directory above it; it creates
// nothing.
func checkDir(flag, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return badInput("%s %s: %s, not a directory", flag, dir, notDirectoryKind(st))
	case errors.Is(err, syscall.ENOTDIR):
		for below, above := dir, filepath.Dir(dir); above != below; below, above = above, filepath.Dir(above) {
			if st, err := os.Stat(above); err == nil && !st.IsDir() {
				return badInput("%s %s: %s is %s, not a directory", flag, dir, above, notDirectoryKind(st))
			}
		}
	}
	return nil
}

// notDirectoryKind says what st, which is no directory, describes: a
// device (/dev/null), a named pipe, a socket or a file.
func notDirectoryKind(st fs.FileInfo) string {
	switch m := st.Mode(); {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a file"
}

// makeDir creates the directory dir a flag names, if needed; a file in its
// place, or in the place of a directory above it, or a directory that may
// not be created, is bad input.
func makeDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	if err := checkDir(flag, dir); err != nil {
		return err
	}
	err := os.MkdirAll(dir, 0o755)
	var pe *os.PathError
	switch {
	case err == nil:
		if err := canCreateIn(dir); err != nil {
			return usageError{&restated{fmt.Sprintf("%s %s: %s: give a directory you can write in", flag, dir, err), err}}
		}
		return nil
	case errors.Is(err, syscall.ENOTDIR) && errors.As(err, &pe):
		return usageError{&restated{fmt.Sprintf("%s %s: %s is a file, not a directory", flag, dir, pe.Path), err}}
	case errors.As(err, &pe):
		why := fileProblem(pe.Err)
		if pe.Path != dir {
			why = pe.Path + ": " + why
		}
		msg := &restated{fmt.Sprintf("%s %s: cannot be created: %s", flag, dir, why), err}
		if errors.Is(err, fs.ErrPermission) {
			return usageError{msg}
		}
		return msg
	}
	return failureWords(flag+" "+dir+": cannot be created", err)
}

// nodes names the flag each node given came from.
func (pf *peerFlags) nodes() nodeFlags {
	nf := nodeFlags{}
	for _, p := range pf.peers {
		nf[p] = "--peer"
	}
	for _, p := range pf.connect {
		nf[p] = "--connect"
	}
	return nf
}

// first names the first peer given, or says that they were found.
func (pf *peerFlags) first() string {
	switch {
	case len(pf.peers) > 0:
		return pf.peers[0]
	case len(pf.connect) > 0:
		return pf.connect[0]
	}
	return fmt.Sprintf("(%s)", "found through the DNS seeds")
}
