package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/store"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

type scanFlags struct {
	peerFlags
	network, mode string
	watch         []string
	from, to      int32
	timeout       time.Duration
	fpRate        float64
	tweak         uint32
	flags         string
	datadir       string
	filterCache   int64
	follow        bool
	maxReloads    int
	isolate       bool
	privacyTarget float64
	newCovers     bool
	maxCoverBlock int
	leak          bip37LeakFlags
	allowShort    bool
}

// bloomFlags maps the --flags names to BIP 37 update rules.
var bloomFlags = map[string]wire.BloomUpdateType{
	"none":          wire.BloomUpdateNone,
	"all":           wire.BloomUpdateAll,
	"p2pubkey-only": wire.BloomUpdateP2PubkeyOnly,
}

// scanLong is the help of scan: the two modes, what a bip37 scan says it
// reveals, the privacy target, and the state --datadir keeps.
const scanLong = `scan connects to one or more nodes as a light client, downloads and verifies
their header chain (the branch with the most work wins), and finds the
transactions that pay to or spend from the watch items in the blocks
--from..--to (inclusive; the whole chain by default).

A watch item is an address of the network, an output script in hex, or an
outpoint TXID:VOUT (its spend is found whatever the script type, P2TR and
P2PK included), optionally with the script it pays: TXID:VOUT:ADDRESS or
TXID:VOUT:SCRIPTHEX. Each may also be @FILE or - for standard input. A
TXID is in display byte order, as RPC shows it; in bip157 mode, the spend
of an outpoint given with its script and the TXID reversed is named in the
warnings. A hex script that does not parse is refused; one that parses but
is no standard output script (P2PK, P2PKH, P2SH, P2WPKH, P2WSH, P2TR, bare
multisig, OP_RETURN) is watched as given, with a warning that shows its
opcodes: nodes relay no payment to it.

  --mode bip157  fetches the BIP 157 filter-header checkpoints and headers
                 from every peer and compares them: where peers disagree,
                 the disputed block is downloaded and decides by consensus
                 rules alone (its outputs, the scripts P2SH-wrapped segwit
                 inputs spend, the count); a peer whose filter the block
                 proves false is banned, with the proof. What the block
                 cannot decide is a conflict (what other inputs show of
                 the scripts they spend holds only if those outputs were
                 standard: it says which side the block then favours):
                 named in the warnings and in --json's conflicts, nobody
                 banned, the block scanned whole, every side still asked.
                 Filters are downloaded from all peers in parallel, each
                 checked against the agreed headers; matching blocks come
                 from a random peer.
  --mode bip37   loads a BIP 37 Bloom filter (random tweak, --flags update
                 rule) into one node, fetches filtered blocks, verifies
                 every merkle proof, checks every transaction locally
                 (Bloom false positives are shown as such), and reloads a
                 fresh filter when it matches ten times its target rate.

A bip37 scan says what its filters reveal, by the model of "spvfilter
privacy model" (P_h after Gervais et al., 2014) applied to the filters as
sent: a node that tests U scripts against the filters it received
(--universe-size, 10,000,000 by default; the wallet's included) names
your N watched scripts with probability P_h(N), and a matching script is
yours with P_h(1): a text line, and --json's leak object. Every peer that
received a filter is in it, the one of a pass abandoned for a failure or
a reorganization too (it keeps what it saw), and the peers together
(collusion) intersect every filter. The object holds the bloom_filter the
rate builds for the watch list (fp_rate and the flag it came from, sizing,
filter_bytes, hash_function_count, element_count, sizing_element_count and
the false_positive_rate at its fill), universe_size and universe_from, per
peer and for the collusion the filters received (bytes, hash functions,
tweak, and the false_positive_rate their bits give), the filter_count,
their joint false_positive_rate, the expected_false_positives, p_h_1 and
p_h_all at that mean and their expectations (_exact), the outpoints sent
in clear (filteradd_outpoint_count, with --flags none or p2pubkey-only)
and the revealed_script_count they name for certain, the merkle blocks and
transactions the peer sent (false positives included) and whether its pass
was abandoned; with a target, privacy_target: the filters the rate is
sized for, its cost, and whether the filters sent met it. A scan that
fails or is interrupted after loading filters still warns of what the
peers keep, in the same line.
--sizing core|bitcoinj sizes the filter as Bitcoin Core or bitcoinj do
(bitcoinj's floating-point hash-function count gives one more at most
sizes), for --fprate and --privacy-target alike.
--privacy-target P sizes the filter in place of --fprate: the advisor of
"privacy model --target-p-h-all" picks the largest filter the sizing rule
builds that keeps E[P_h(N)] below P, also over the fills of real filters,
for a peer holding every filter the scan may send (1 + --max-reloads), or,
when cheaper, its rate for one filter raised to 0.1, from which the client
never reloads (it reloads a filter matching ten times its rate). Each
filter is filled to at least the rate the target needs
(min_filter_false_positive_rate). A reload keeps the first filter's size
while the outpoints found fit its room, so it tells the node no more than
the first. The output gives the rate and its cost.
The filter leaves room for 50 found outpoints per watch item and fills
that room with random elements (never derived from the wallet) to the
rate, so the filter sent matches, from its bits, what the rate says: for
one address among 10,000,000 scripts, the default --fprate 0.0001 builds
122 bytes with 13 hash functions: P_h(N) 0.001 for a peer holding one
filter. --privacy-target 0.5 picks 0.0057 for a peer holding three
filters (the first and two reloads: 68 bytes, 6 hash functions, E[P_h(N)]
0.36) at about 170 false-positive transactions per block of 3,000; with
--max-reloads 0 it picks 2.54e-07 (201 bytes, 21 functions: 0.35) at
about 0.0072.

With one node (--connect, or --peer on regtest and simnet) the result
rests on that node alone, and says so in its warnings. Every answer is
verified; a node that lies is banned and named, one that stalls longer
than --timeout or disconnects is dropped and named.
A reorganization during the scan is followed: the scan starts again on the
new chain and lists the blocks disconnected. A progress bar is drawn on
standard error when it is a terminal.

--datadir keeps the chain state (headers, verified filter headers, a cache
of verified filters) so that the next scan resumes: it syncs only new
headers and takes what it holds from disk, each filter checked against its
stored header. A --datadir given must exist (create it to start one); the
default one is created as needed. --follow (bip157) goes on past the tip,
printing one JSON object per line for every event ({"event":
"match"|"connected"| "disconnected"|"tip", ...}, a match with the fields
of --json's matches) until SIGINT or SIGTERM, which end it with exit 0 and
a summary line (one that came while it waited for a peer names the wait in
its warnings). With no peer in use for 10 seconds (all gone away; they are
redialled) it says so on standard error, naming each and why, and says
when one is back; with --json these are JSON lines, {"warning": "..."}
and {"log": "..."}, and the summary's warnings are in it alone.

Exit status: 0 done (warnings, if any, on standard error or in --json's
"warnings", among them a --privacy-target not met with --allow-short-covers),
2 bad input, 1 failure (a --privacy-target not met without --allow-short-covers,
no usable peer, peers in conflict over more than 64
blocks, --from or --to above the nodes' tip, a chain saved in --datadir that
the nodes do not extend, as a regtest node restarted does not), 130
Ctrl-C or SIGTERM before the scan (not --follow) was done: the error says
where what it verified and stored so far is kept for the next scan to
resume from, in the data directory, or that nothing is (none given on
regtest or simnet).`

// scanExample shows scan in both modes, with a privacy target and a
// spend of an output funded before --from.
const scanExample = `  spvfilter scan --connect 127.0.0.1:18444 --connect 127.0.0.1:18445 --network regtest --mode bip157 \
      --watch bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080
  spvfilter scan --connect 127.0.0.1:18444 --network regtest --mode bip37 --flags p2pubkey-only \
      --watch 76a914000000000000000000000000000000000000000088ac --from 100 --to 200 --json
  spvfilter scan --connect 127.0.0.1:18444 --network regtest --mode bip37 --privacy-target 0.5 \
      --max-reloads 0 --universe-size 10000000 --watch bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080
  spvfilter scan --connect 127.0.0.1:18444 --network regtest --mode bip157 --from 3000 \
      --watch 1f7f...e3:0:bcrt1p...   # the spend of an output funded before --from`

// scanArgs refuses arguments, as noArgs does; one given beside --watch
// is most likely a second item after the first's --watch ("--watch 51
// 52"), and each item takes its own.
func scanArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.Flags().Changed("watch") {
		return badInput("unexpected argument %q: each item to watch takes its own --watch: give --watch %s", args[0], args[0])
	}
	return noArgs(cmd, args)
}

func newScanCommand(a *app) *cobra.Command {
	var fl scanFlags
	cmd := &cobra.Command{
		Use:     "scan --watch ITEM [--watch ITEM ...] [--peer HOST:PORT [--peer HOST:PORT ...] | --connect HOST:PORT [--connect HOST:PORT ...]] [--network NET] [--mode bip157|bip37]",
		Short:   "Find the transactions of a watch list in the nodes' blocks, with BIP 37 or BIP 157",
		Long:    scanLong,
		Example: scanExample,
		Args:    scanArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runScan(cmd, &fl)
		},
	}
	fl.register(cmd.Flags())
	_ = cmd.MarkFlagRequired("watch")
	return cmd
}

// register defines scan's flags on f, bound to fl.
func (fl *scanFlags) register(f *pflag.FlagSet) {
	fl.peerFlags.register(f)
	f.StringVar(&fl.network, "network", "mainnet", networkNames())
	f.StringVar(&fl.mode, "mode", "bip157", "`MODE`: bip37 or bip157")
	f.StringArrayVar(&fl.watch, "watch", nil, "`ITEM` to watch: an address, hex output script or TXID:VOUT[:SCRIPT] outpoint (repeatable)")
	f.Int32Var(&fl.from, "from", 0, "first block `HEIGHT` to scan (default 0, the genesis block)")
	f.Int32Var(&fl.to, "to", 0, "last block `HEIGHT` to scan (default the chain tip)")
	wantValues(f, wantHeight, "from", "to")
	f.DurationVar(&fl.timeout, "timeout", peer.DefaultTimeout, "longest wait `DURATION` for the whole answer to any one request")
	f.Float64Var(&fl.fpRate, "fprate", defaultScanFPRate, "bip37: `RATE`, the chance that a script or outpoint outside the watch list matches the filter sent, from its bits (the room left for found outpoints is filled with random elements to it): a node testing U scripts sees about U·rate others match, so the lower the rate, the surer it is of the wallet's")
	f.Uint32Var(&fl.tweak, "tweak", 0, "BIP 37 filter tweak `T`, for tests (default a random one for every filter)")
	f.StringVar(&fl.flags, "flags", "all", "BIP 37 update `RULE`: none, all or p2pubkey-only")
	f.StringVar(&fl.datadir, "datadir", "", "directory for the chain state, resumed by the next scan: a network's in `DIR`/NETWORK, such as DIR/regtest (give DIR, not DIR/regtest); one given must exist, so that a mistyped path is refused rather than started anew ('' for none; default: a directory per network under the user cache directory, created as needed, for mainnet, testnet3, testnet4 and signet, none for regtest and simnet)")
	f.Int64Var(&fl.filterCache, "filter-cache", store.DefaultFilterCacheBytes, "`BYTES` of verified filters kept in --datadir (0 for none)")
	wantValues(f, "want a number of bytes, a whole number without a unit (268435456 is 256 MiB; 0 for none)", "filter-cache")
	f.IntVar(&fl.maxReloads, "max-reloads", client.DefaultMaxReloads, "at most `N` fresh BIP 37 filters loaded in place of one the node makes match far beyond its rate (each tells the node more)")
	f.BoolVar(&fl.isolate, "isolate", false, "bip157: fetch each block over a connection of its own through --proxy, with fresh SOCKS5 credentials, which Tor isolates on a circuit of its own: a node sees each block asked by a stranger (needs --proxy)")
	f.Float64Var(&fl.privacyTarget, "privacy-target", 0, "bip157: fetch the blocks of cover scripts (kept in --datadir, the same every session) with the wallet's, so that a peer watching the downloads, or all of them together, gives no watched script a probability above `P` (0, the default, for none; else in (0, 1); while the covers are short, a scan first explores blocks for more, within --max-cover-blocks, and fetches, of the wallet's blocks, only those it explores as any other and, once, one of each of its chains until they meet P); bip37: size the filter, in place of --fprate, so that the model's E[P_h(N)] stays below P for the filtering peer")
	f.BoolVar(&fl.newCovers, "new-covers", false, "with --privacy-target: start a new cover set in place of a damaged or deleted cover file (anyone holding earlier sessions can then strip the covers they fetched)")
	f.IntVar(&fl.maxCoverBlock, "max-cover-blocks", 0, "with --privacy-target: at most `N` blocks a scan fetches only for covers, those explored to find them included (default 0: 4 times the wallet's; -1: no bound); covers still short within it stop the scan before any block of the wallet's is fetched (the next scan explores on), unless --allow-short-covers")
	f.BoolVar(&fl.allowShort, "allow-short-covers", false, "with --privacy-target: when the covers are short of the target within --max-cover-blocks, fetch the wallet's blocks anyway with the covers found, and report the target not met, instead of stopping before any is fetched (a peer that records the scan keeps what it exposed)")
	fl.leak.register(f)
	exampleValue(f, "privacy-target", "0.5")
	exampleValue(f, "to", "100")
	wantValues(f, "want a whole number of scripts, more than the watch list's", "universe-size")
	wantValues(f, "want a whole number, at least 0 (0 for none)", "max-reloads")
	wantValues(f, "want -1 for no bound, 0 (the default) for 4 times the wallet's, or a whole number of blocks", "max-cover-blocks")
	f.BoolVar(&fl.follow, "follow", false, "after the tip, keep following new blocks (bip157), printing one JSON object per line for every event, until interrupted")
}

// watchItem is a watch list entry as given and as a client watch item.
type watchItem struct {
	given string
	where string // how errors name it: "--watch 2 (@FILE line 3)"
	item  client.WatchItem
}

// watchItemIndex finds the client's 0-based "watch item N" in its words.
var watchItemIndex = regexp.MustCompile(`watch item (\d+)`)

// onePeerText matches the client's warning that heights rest on one peer.
var onePeerText = regexp.MustCompile(`^heights (\d+)\.\.(\d+) rest on one peer: (\S+) \(no other peer's chain reaches them\)$`)

// byFlag rewrites the client's warnings in the tool's words: its "watch
// item N" (0-based, in the order it was given the items) as the --watch
// item the user gave, a peer it could not reach as unreachable says it,
// and heights that rest on one peer as what was true when they were
// checked (a peer that caught up since, listed at their height, did not
// check them).
func byFlag(warnings []string, items []watchItem, params *chaincfg.Params, datadir string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		w = diskNoteWords(peerWords(w, params, true))
		if rest, ok := strings.CutPrefix(w, "chain state: "); ok && datadir != "" {
			// A file of the data directory: named by its flag.
			w = "--datadir " + datadir + ": " + rest
		}
		w = onePeerText.ReplaceAllString(w, "heights $1..$2 rest on one peer, $3: no other peer's chain reached them when they were checked (a peer that reached them later did not check them)")
		out[i] = watchItemIndex.ReplaceAllStringFunc(w, func(m string) string {
			n, err := strconv.Atoi(watchItemIndex.FindStringSubmatch(m)[1])
			if err != nil || n >= len(items) {
				return m
			}
			return items[n].where
		})
	}
	return out
}

// parseWatch reads the --watch values; a file (or standard input) holds
// one item per line.
func (a *app) parseWatch(values []string, params *chaincfg.Params) ([]watchItem, error) {
	args, err := a.readItems("--watch", values)
	if err != nil {
		return nil, err
	}
	var out []watchItem
	for _, arg := range args {
		v := strings.TrimSpace(arg.text)
		if v == "" {
			return nil, badInput("%s: empty: give an address, a hex output script or an outpoint TXID:VOUT", arg.where)
		}
		if isBinary(v) {
			return nil, badInput("%s: binary data: give an address, a hex output script or an outpoint TXID:VOUT, one per line", arg.where)
		}
		if severalWatchItems(v) {
			return nil, badInput("%s: %q: several items in one: give each its own --watch, or a file of one per line as --watch @FILE", arg.where, v)
		}
		if strings.Contains(v, ":") {
			// No address or hex script holds a colon: an outpoint.
			op, rest, err := parseOutPoint(v)
			if err != nil {
				return nil, badInput("%s: %w", arg.where, err)
			}
			it := watchItem{given: v, where: arg.where, item: client.OutPointItem(op, nil)}
			if rest != "" {
				script, err := watchScript(arg.where+", the script of outpoint "+v, rest, params)
				if err != nil {
					return nil, err
				}
				it.item.Script = script
			}
			out = append(out, it)
			continue
		}
		script, err := watchScript(arg.where, v, params)
		if err != nil {
			return nil, err
		}
		out = append(out, watchItem{given: v, where: arg.where, item: client.ScriptItem(script)})
	}
	return out, nil
}

// severalWatchItems reports whether v is several watch items in one,
// apart by commas or spaces: an address or an outpoint, then more. A hex
// script with spaces in it is one item.
func severalWatchItems(v string) bool {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	if len(fields) < 2 {
		return false
	}
	return strings.ContainsAny(v, ",;") || looksLikeAddress(fields[0]) || strings.Contains(fields[0], ":")
}

// parseOutPoint reads TXID:VOUT or TXID:VOUT:SCRIPT, with TXID in display
// byte order, and names what is wrong.
func parseOutPoint(v string) (wire.OutPoint, string, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 {
		return wire.OutPoint{}, "", fmt.Errorf("outpoint %q: want TXID:VOUT or TXID:VOUT:SCRIPT", v)
	}
	if len(parts[0]) != 64 {
		return wire.OutPoint{}, "", fmt.Errorf("outpoint %q: the txid has %s, want 64 hex digits", v, plural(len(parts[0]), "character"))
	}
	h, err := chainhash.NewHashFromStr(parts[0])
	if err != nil {
		return wire.OutPoint{}, "", fmt.Errorf("outpoint %q: the txid is not hex", v)
	}
	n, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil {
		return wire.OutPoint{}, "", fmt.Errorf("outpoint %q: vout %q is not a number from 0 to 4294967295", v, parts[1])
	}
	rest := ""
	if len(parts) == 3 {
		if rest = parts[2]; rest == "" {
			return wire.OutPoint{}, "", fmt.Errorf("outpoint %q: empty script after the second colon (give an address or a hex script, or leave out the colon)", v)
		}
	}
	return wire.OutPoint{Hash: *h, Index: uint32(n)}, rest, nil
}

// watchScript reads an address of the network or a hex output script.
// An address of other networks is named as theirs; one that has an
// address's form but does not decode (a typo) says why.
func watchScript(what, v string, params *chaincfg.Params) ([]byte, error) {
	addr, err := btcutil.DecodeAddress(v, params)
	if err == nil && addr.IsForNet(params) {
		script, err := txscript.PayToAddrScript(addr)
		if err != nil {
			return nil, badInput("%s: address %s: %w", what, v, err)
		}
		return script, nil
	}
	if others := addressNetworks(v); len(others) > 0 {
		return nil, badInput("%s: %s is %s address, not a %s one: %s", what, v, networksPhrase(others), params.Name, networkAdvice(others, params))
	}
	if err != nil && looksLikeAddress(v) {
		return nil, usageError{&restated{fmt.Sprintf("%s: %s is not a valid address: %s", what, v, addressProblem(v, err)), err}}
	}
	if why := notWatchable(v); why != "" {
		return nil, badInput("%s: %s", what, why)
	}
	return decodeHex(what+" (not an address of "+params.Name+", read as a hex output script)", v)
}

// addressNetworks lists the networks v is an address of.
func addressNetworks(v string) []string {
	var nets []string
	for _, n := range knownNetworks {
		if addr, err := btcutil.DecodeAddress(v, n.params); err == nil && addr.IsForNet(n.params) {
			nets = append(nets, n.name)
		}
	}
	return nets
}

// networksPhrase names the networks an address is of, with its article:
// "a mainnet", or "a testnet (testnet3, testnet4 and signet)" for the
// networks that share their addresses.
func networksPhrase(nets []string) string {
	if len(nets) == 1 {
		return "a " + nets[0]
	}
	return fmt.Sprintf("a testnet (%s and %s)", strings.Join(nets[:len(nets)-1], ", "), nets[len(nets)-1])
}

// networkAdvice says which --network to give for an address of the
// networks nets, where params is the network given (mainnet by default,
// the usual slip).
func networkAdvice(nets []string, params *chaincfg.Params) string {
	give := "give --network " + nets[0]
	if n := len(nets); n > 1 {
		give = fmt.Sprintf("give --network %s or %s", strings.Join(nets[:n-1], ", "), nets[n-1])
	}
	if params.Name == chaincfg.MainNetParams.Name {
		give += " (the network is mainnet unless --network says otherwise)"
	}
	return give + ", or an address of " + params.Name
}

// looksLikeAddress reports whether v has the form of an address of a
// known network: a segwit prefix (bc1, tb1, bcrt1, sb1), or base58 of an
// address's length that is not hex.
func looksLikeAddress(v string) bool {
	lower := strings.ToLower(v)
	for _, n := range knownNetworks {
		if strings.HasPrefix(lower, n.params.Bech32HRPSegwit+"1") {
			return true
		}
	}
	if len(v) < 26 || len(v) > 35 || isHexDigits(v) {
		return false
	}
	return strings.Trim(v, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz") == ""
}

// bech32Charset are the characters of bech32's data part.
const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// addressProblem says why v, which has an address's form, is none: err is
// btcutil's answer. A checksum that does not match is said without the
// checksum that would (pasting it in would hide the typo).
func addressProblem(v string, err error) string {
	const typo = "a character is wrong, missing or swapped (a typo?)"
	for _, n := range knownNetworks {
		hrp := n.params.Bech32HRPSegwit + "1"
		if len(v) < len(hrp) || !strings.EqualFold(v[:len(hrp)], hrp) {
			continue
		}
		rest := v[len(hrp):]
		if i := strings.IndexFunc(rest, func(r rune) bool { return !strings.ContainsRune(bech32Charset, unicode.ToLower(r)) }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(rest[i:])
			return fmt.Sprintf("%q at character %d is not one of bech32's (which leaves out 1, b, i and o after the %s prefix): a typo?", r, utf8.RuneCountInString(v[:len(hrp)+i])+1, hrp)
		}
		_, _, derr := bech32.DecodeNoLimit(v)
		var sum bech32.ErrInvalidChecksum
		switch {
		case errors.As(derr, &sum):
			return "its bech32 checksum does not match: " + typo
		case errors.As(derr, new(bech32.ErrMixedCase)):
			return "it mixes upper and lower case"
		case derr != nil:
			return derr.Error()
		}
		return err.Error()
	}
	if errors.Is(err, btcutil.ErrChecksumMismatch) {
		return "its base58 checksum does not match: " + typo
	}
	return err.Error() + " (a typo?)"
}

// isHexDigits reports whether s holds hex digits only.
func isHexDigits(s string) bool {
	return strings.Trim(s, "0123456789abcdefABCDEF") == ""
}

// scanMatchJSON is one matched transaction in --json output.
type scanMatchJSON struct {
	Txid          string   `json:"txid"`
	Height        int32    `json:"height"`
	BlockHash     string   `json:"block_hash"`
	Watch         []string `json:"watch"`
	FalsePositive bool     `json:"false_positive"`
}

// scanPeerJSON is one peer of the scan in --json output.
type scanPeerJSON struct {
	Address string `json:"address"`
	// UserAgent is null for a peer never reached.
	UserAgent *string `json:"user_agent"`
	Banned    bool    `json:"banned"`
	// Reason says why the peer is banned or not used, null for a peer
	// in use.
	Reason *string `json:"reason"`
	// Compared: the peer's answers were compared with another peer's.
	Compared bool `json:"compared"`
	// Tip is the height of the peer's best block, null when not known.
	Tip *int32 `json:"tip"`
	// Branch is where the peer's chain leaves the client's, if it does.
	Branch *branchJSON `json:"branch"`
}

// named names the peer with its user agent, when it said one.
func (p *scanPeerJSON) named() string {
	if p.UserAgent == nil {
		return "peer " + p.Address
	}
	return fmt.Sprintf("peer %s (%s)", p.Address, *p.UserAgent)
}

// why is the peer's reason, "" for a peer in use.
func (p *scanPeerJSON) why() string {
	if p.Reason == nil {
		return ""
	}
	return *p.Reason
}

// orNull is s, or nil (null in JSON) when s is empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tipText says where the peer's chain ends: "tip H", or that it is not
// known.
func (p *scanPeerJSON) tipText() string {
	if p.Tip == nil {
		return "tip unknown"
	}
	return fmt.Sprintf("tip %d", *p.Tip)
}

// branchJSON is a peer's own branch in --json output.
type branchJSON struct {
	Fork      int32  `json:"fork"`
	Height    int32  `json:"height"`
	BlockHash string `json:"block_hash"`
}

// onePeerJSON is a range of heights only one peer could speak for.
type onePeerJSON struct {
	From int32  `json:"from"`
	To   int32  `json:"to"`
	Peer string `json:"peer"`
}

// conflictJSON is a block whose filter the peers disagree on and the
// block cannot decide (it was scanned whole).
type conflictJSON struct {
	Height    int32      `json:"height"`
	BlockHash string     `json:"block_hash"`
	Sides     [][]string `json:"sides"`
	Undecided string     `json:"undecided"`
}

// peersJSON describes the client's peers of params' network in --json
// output, why a peer is not used in the tool's words.
func peersJSON(ps []client.PeerStatus, params *chaincfg.Params) []scanPeerJSON {
	out := []scanPeerJSON{}
	for _, p := range ps {
		j := scanPeerJSON{Address: p.Address, UserAgent: orNull(p.UserAgent), Banned: p.Banned, Reason: orNull(statusWords(p, params)), Compared: p.Compared}
		if p.Tip >= 0 {
			tip := p.Tip
			j.Tip = &tip
		}
		if b := p.Branch; b != nil {
			j.Branch = &branchJSON{Fork: b.Fork, Height: b.Height, BlockHash: b.Hash.String()}
		}
		out = append(out, j)
	}
	return out
}

type scanJSON struct {
	// FilteringPeer is the peer that filtered the blocks with the BIP 37
	// filter, null in bip157 mode (peers lists every peer).
	FilteringPeer       *string         `json:"filtering_peer"`
	Network             string          `json:"network"`
	Mode                string          `json:"mode"`
	From                int32           `json:"from"`
	To                  int32           `json:"to"`
	Matches             []scanMatchJSON `json:"matches"`
	BlocksScanned       int             `json:"blocks_scanned"`
	FiltersReceived     int             `json:"filters_received"`
	MerkleBlocks        int             `json:"merkle_block_count"`
	BlocksFetched       int             `json:"blocks_fetched"`
	FalsePositiveBlocks int             `json:"false_positive_block_count"`
	FalsePositiveTxs    int             `json:"false_positive_transaction_count"`
	SpendOnlyBlocks     []int32         `json:"spend_only_blocks"`
	FilterReloads       int             `json:"filter_reload_count"`
	Disconnected        []string        `json:"disconnected"`
	BytesReceived       uint64          `json:"bytes_received"`
	Seconds             float64         `json:"seconds"`
	OnePeerHeights      []onePeerJSON   `json:"one_peer_heights"`
	Conflicts           []conflictJSON  `json:"conflicts"`
	Peers               []scanPeerJSON  `json:"peers"`
	// Leak is what the peers could conclude about the watch list from
	// what the client asked them: a *leak.Leak in bip157 mode (null when
	// it could not be computed, a warning saying why), a *bip37LeakJSON
	// in bip37 mode.
	Leak any `json:"leak"`
	// Cover is what the covers of --privacy-target cost, and whether the
	// target was met (null without it).
	Cover    *client.CoverCost `json:"cover"`
	Warnings []string          `json:"warnings"`
}

// scanPlan is a scan as the command line asks for it, every flag checked:
// the client's configuration, the watch list and the BIP 37 settings.
type scanPlan struct {
	mode, network string
	client        client.Config
	// nodes names the flag each node given came from.
	nodes nodeFlags
	items []watchItem
	// reversed are, in bip157 mode, the outpoints of items given with a
	// script, byte-reversed, watched too so that a txid given in the
	// wrong byte order is named: the client matches filters locally, so
	// they tell the nodes nothing more. reversed[i] stands for the item
	// of index reversedOf[i].
	reversed   []client.WatchItem
	reversedOf []int
	bip37      client.BIP37Options
	// bip37Rate is how the BIP 37 filter's rate was chosen (nil in
	// bip157 mode).
	bip37Rate *bip37Plan
	from, to  int32 // to < 0: the tip, once known
	follow    bool
	// warnings are those the command line alone gives.
	warnings []string
}

// watch returns the plan's watch items as the client takes them.
func (p *scanPlan) watch() []client.WatchItem { return watchOf(p.items) }

// watchOf returns the client's watch items of items.
func watchOf(items []watchItem) []client.WatchItem {
	w := make([]client.WatchItem, len(items))
	for i, it := range items {
		w[i] = it.item
	}
	return w
}

// watchReversed returns the watch items and then the reversed outpoints.
func (p *scanPlan) watchReversed() []client.WatchItem {
	return append(p.watch(), p.reversed...)
}

// addReversed watches, in bip157 mode, the byte-reverse of every outpoint
// given with its script.
func (p *scanPlan) addReversed() {
	if p.mode != "bip157" {
		return
	}
	for i, it := range p.items {
		if !it.item.IsOutPoint || len(it.item.Script) == 0 {
			continue
		}
		op := it.item.OutPoint
		slices.Reverse(op.Hash[:])
		p.reversed = append(p.reversed, client.OutPointItem(op, it.item.Script))
		p.reversedOf = append(p.reversedOf, i)
	}
}

// runScan plans the scan from the flags, runs it and prints the result.
func (a *app) runScan(cmd *cobra.Command, fl *scanFlags) error {
	plan, err := a.planScan(cmd.Flags(), fl)
	if err != nil {
		return err
	}
	ctx, stop := a.signalContext(context.Background())
	defer stop()
	start := time.Now()
	res, err := a.executeScan(ctx, plan)
	a.warnFailedBIP37(plan, err)
	err = coverWords(nodeFailureFrom(err, plan.client.Params, plan.client.DataDir, plan.nodes))
	if err != nil {
		// An interrupt ends the scan with "interrupted", not with the
		// bare context error, and says what is kept for the next scan.
		return scanInterrupted(interruptedBy(ctx, err, "scan"), plan.client)
	}
	if res == nil {
		return nil // --follow, ended by a signal
	}
	out := newScanJSON(plan, res, time.Since(start))
	out.Warnings = plan.nodes.namedAll(out.Warnings)
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	return a.printScan(&out)
}

// scanInterrupted returns err, and when it is the scan's interruption,
// says in it where what the scan verified and stored so far is kept for
// the next scan to resume from (DATADIR/NETWORK), or that nothing is,
// there being no data directory: before, "scan interrupted" alone left
// the user to guess whether a long sync had to be done again.
func scanInterrupted(err error, cfg client.Config) error {
	var ie *interruptedError
	if !errors.As(err, &ie) {
		return err
	}
	if cfg.DataDir == "" {
		why := "--datadir '' keeps none"
		if defaultDataDir(cfg.Params) == "" {
			why = cfg.Params.Name + " keeps none by default"
		}
		ie.kept = fmt.Sprintf("nothing it verified is kept, there being no data directory (%s): give --datadir DIR for the next scan to resume from what it stores there", why)
		return err
	}
	ie.kept = fmt.Sprintf("what it verified and stored so far is kept in %s, and the next scan with this data directory resumes from it", filepath.Join(cfg.DataDir, cfg.Params.Name))
	return err
}

// planScan checks the flags, in the order the help gives them, and
// reads the watch list: everything that is bad input whatever the nodes
// say. The data directory is created last, once the rest is known good.
func (a *app) planScan(flags *pflag.FlagSet, fl *scanFlags) (*scanPlan, error) {
	params, err := lookupNetwork(fl.network)
	if err != nil {
		return nil, err
	}
	ccfg, err := fl.clientConfig(flags, params)
	if err != nil {
		return nil, err
	}
	plan := &scanPlan{mode: fl.mode, network: fl.network, from: fl.from, to: fl.to, follow: fl.follow}
	if err := fl.checkRange(flags, plan); err != nil {
		return nil, err
	}
	if fl.filterCache < 0 {
		return nil, badRange("--filter-cache", fl.filterCache, "")
	}
	datadir, err := fl.dataDir(flags, params)
	if err != nil {
		return nil, err
	}
	if err := plan.addWatch(a, flags, fl, params); err != nil {
		return nil, err
	}
	if fl.privacyTarget != 0 && fl.mode == "bip157" && datadir == "" {
		return nil, badInput("--privacy-target without a data directory: covers must be the same every session (drawn anew, an intersection of sessions strips them); give --datadir")
	}
	if err := makeDataDir(datadir); err != nil {
		return nil, err
	}
	ccfg.Timeout, ccfg.DataDir, ccfg.FilterCacheBytes = fl.timeout, datadir, fl.filterCacheBytes()
	plan.client, plan.nodes = ccfg, fl.peerFlags.nodes()
	return plan, nil
}

// clientConfig checks --mode, the peer flags, --isolate and the cover
// flags, and returns the client's configuration they give: its network,
// nodes, services, isolation and, in bip157 mode, covers.
func (fl *scanFlags) clientConfig(flags *pflag.FlagSet, params *chaincfg.Params) (client.Config, error) {
	if fl.mode != "bip37" && fl.mode != "bip157" {
		return client.Config{}, badInput("--mode %q: want bip37 or bip157", fl.mode)
	}
	services := wire.SFNodeCF | wire.SFNodeWitness
	if fl.mode == "bip37" {
		services = wire.SFNodeBloom
	}
	ccfg, err := fl.peerFlags.config(params, services)
	if err != nil {
		return ccfg, err
	}
	switch {
	case fl.isolate && fl.mode == "bip37":
		return ccfg, badInput("--isolate with --mode bip37: a BIP 37 scan asks its one filtering peer for every block; --isolate is for --mode bip157")
	case fl.isolate && fl.proxy == "":
		return ccfg, badInput("--isolate without --proxy: a connection of its own per block made without a proxy comes from your own address; give --proxy, such as Tor's socks5://127.0.0.1:9050")
	}
	ccfg.Isolate = fl.isolate
	if err := fl.checkCovers(flags); err != nil {
		return ccfg, err
	}
	if fl.mode == "bip157" {
		ccfg.PrivacyTarget, ccfg.NewCovers, ccfg.MaxCoverBlocks, ccfg.AllowShortCovers = fl.privacyTarget, fl.newCovers, fl.maxCoverBlock, fl.allowShort
	}
	return ccfg, nil
}

// dataDir returns the data directory of the scan ("" for none): --datadir
// when given, which must exist (needDataDir), else the network's default.
// A file in its place is refused; nothing is created.
func (fl *scanFlags) dataDir(flags *pflag.FlagSet, params *chaincfg.Params) (string, error) {
	datadir := fl.datadir
	if !flags.Changed("datadir") {
		datadir = defaultDataDir(params)
	}
	if err := checkDir("--datadir", datadir); err != nil {
		return "", err
	}
	if flags.Changed("datadir") {
		if err := needDataDir(datadir); err != nil {
			return "", err
		}
		if err := notNetworkDir(datadir, params); err != nil {
			return "", err
		}
	}
	return datadir, nil
}

// filterCacheBytes is --filter-cache as the client takes it: -1 for none.
func (fl *scanFlags) filterCacheBytes() int64 {
	if fl.filterCache == 0 {
		return -1
	}
	return fl.filterCache
}

// addWatch reads the watch list into the plan, with the BIP 37 filter's
// options and rate, and the warnings they give; in bip37 mode it checks
// the watch list against the filter (checkBIP37Watch).
func (p *scanPlan) addWatch(a *app, flags *pflag.FlagSet, fl *scanFlags, params *chaincfg.Params) error {
	var err error
	if p.bip37, err = fl.bip37Options(flags); err != nil {
		return err
	}
	if p.items, err = a.parseWatch(fl.watch, params); err != nil {
		return err
	}
	w, err := checkWatchScripts(p.items, fl.mode)
	if err != nil {
		return err
	}
	p.warnings = append(p.warnings, w...)
	p.addReversed()
	if p.bip37Rate, err = fl.planBIP37Rate(flags, p.watch()); err != nil {
		return err
	}
	if flags.Changed("tweak") {
		p.warnings = append(p.warnings, "--tweak fixes the BIP 37 filter's tweak: filters of different sessions can be linked by it")
	}
	if fl.mode == "bip37" {
		return p.setBIP37Rate(fl.flags)
	}
	return nil
}

// setBIP37Rate puts the chosen rate into the BIP 37 options and checks
// the watch list against the filter they make; flags is --flags, named
// in a warning when a --privacy-target cannot hide what the node's update
// rule leaves out.
func (p *scanPlan) setBIP37Rate(flags string) error {
	p.bip37.FPRate = p.bip37Rate.rate
	p.bip37.MinFilterRate = p.bip37Rate.filterFloor()
	if p.bip37Rate.target != 0 && p.bip37.Flags != wire.BloomUpdateAll {
		p.warnings = append(p.warnings, fmt.Sprintf("--privacy-target with --flags %s: the outputs found that the node's update rule does not add go out in clear (filteradd) and name their scripts to it for certain, which no rate hides; --flags all keeps them inside the filter", flags))
	}
	w, err := checkBIP37Watch(p.items, p.bip37, p.bip37Rate.rateFrom)
	if err != nil {
		return err
	}
	p.warnings = append(p.warnings, w...)
	return nil
}

// checkCovers checks --privacy-target, --new-covers,
// --max-cover-blocks and --allow-short-covers.
func (fl *scanFlags) checkCovers(flags *pflag.FlagSet) error {
	t := fl.privacyTarget
	switch {
	case t != 0 && !(t > 0 && t < 1):
		return badRange("--privacy-target", t, "a probability in (0, 1), or 0 (the default) for none")
	case fl.mode == "bip37" && given(flags, "new-covers", "max-cover-blocks", "allow-short-covers") != "":
		return badInput("%s for --mode bip157: covers are fetched blocks, which a BIP 37 scan does not fetch (its --privacy-target sizes the filter)", given(flags, "new-covers", "max-cover-blocks", "allow-short-covers"))
	case t == 0 && given(flags, "new-covers", "max-cover-blocks") != "":
		return badInput("%s for --privacy-target", given(flags, "new-covers", "max-cover-blocks"))
	case t == 0 && flags.Changed("allow-short-covers"):
		return badInput("--allow-short-covers is for --privacy-target: without covers, nothing stops a scan short of them")
	case fl.maxCoverBlock < -1:
		return badRange("--max-cover-blocks", fl.maxCoverBlock, "")
	}
	return nil
}

// given names those of flags the command line gave, with the verb
// that agrees: "--a is", "--a and --b are", "--a, --b and --c are";
// "" for none.
func given(flags *pflag.FlagSet, names ...string) string {
	var got []string
	for _, n := range names {
		if flags.Changed(n) {
			got = append(got, "--"+n)
		}
	}
	switch len(got) {
	case 0:
		return ""
	case 1:
		return got[0] + " is"
	}
	return strings.Join(got[:len(got)-1], ", ") + " and " + got[len(got)-1] + " are"
}

// checkRange checks --from, --to, --timeout and --follow into plan.
func (fl *scanFlags) checkRange(flags *pflag.FlagSet, plan *scanPlan) error {
	if fl.from < 0 {
		return badRange("--from", fl.from, "")
	}
	if !flags.Changed("to") {
		plan.to = -1 // the tip, once known
	} else if fl.to < 0 {
		return badRange("--to", fl.to, "")
	}
	if plan.to >= 0 && plan.to < fl.from {
		return toBelowFrom(plan.to, fl.from)
	}
	if fl.timeout <= 0 {
		return notPositive("--timeout", fl.timeout)
	}
	if fl.follow && fl.mode != "bip157" {
		return badInput("--follow needs --mode bip157")
	}
	if fl.follow && flags.Changed("to") {
		return badInput("--follow goes on past any --to: give one or the other")
	}
	return nil
}

// bip37Options checks the BIP 37 flags, which only --mode bip37 takes.
func (fl *scanFlags) bip37Options(flags *pflag.FlagSet) (client.BIP37Options, error) {
	var opt client.BIP37Options
	update, ok := bloomFlags[fl.flags]
	if !ok {
		return opt, badInput("--flags %q: want none, all or p2pubkey-only", fl.flags)
	}
	if fl.mode == "bip37" && !(fl.fpRate > 0 && fl.fpRate < 1) {
		return opt, badRange("--fprate", fl.fpRate, "a rate in (0, 1)")
	}
	if fl.maxReloads < 0 {
		return opt, badRange("--max-reloads", fl.maxReloads, "")
	}
	if fl.mode != "bip37" {
		for _, name := range []string{"tweak", "flags", "fprate", "max-reloads"} {
			if flags.Changed(name) {
				return opt, badInput("--%s needs --mode bip37", name)
			}
		}
	}
	opt = client.BIP37Options{FPRate: fl.fpRate, Flags: update, Sizing: fl.leak.sizing, MaxReloads: fl.maxReloads}
	if fl.maxReloads == 0 {
		opt.MaxReloads = -1 // none
	}
	if flags.Changed("tweak") {
		opt.Tweak = &fl.tweak
	}
	return opt, nil
}

// checkWatchScripts refuses a watched script no scan of the mode can find
// (an OP_RETURN output, which BIP 158 filters leave out) or that does not
// parse (cut short), and warns of one no output can usefully pay (longer
// than a script that can be spent, or no standard output script: see
// nonStandardScript), and of a hash given where its script was meant
// (see hashNotScript).
func checkWatchScripts(items []watchItem, mode string) ([]string, error) {
	var warnings []string
	for _, it := range items {
		s := it.item.Script
		if it.item.IsOutPoint || len(s) == 0 {
			continue
		}
		if s[0] == txscript.OP_RETURN && mode == "bip157" {
			return nil, badInput("%s: script %x begins with OP_RETURN: BIP 158 filters leave such outputs out, so no bip157 scan finds it (--mode bip37 matches its data pushes)", it.where, s[:min(len(s), 40)])
		}
		if len(s) > txscript.MaxScriptSize {
			warnings = append(warnings, fmt.Sprintf("%s: a script of %d bytes, more than the %d a script can have to be spent: an output paying it is unspendable and not relayed by nodes (is it an output script?)",
				it.where, len(s), txscript.MaxScriptSize))
		}
		if err := scriptParseError(s); err != nil {
			if w := hashNotScript(s); w != "" {
				return nil, badInput("%s: %s (as a script it does not parse: %v)", it.where, w, err)
			}
			return nil, badInput("%s: script %x does not parse (%v): no output that can be spent pays it (is it cut short?)",
				it.where, s[:min(len(s), 40)], err)
		}
		if w := hashNotScript(s); w != "" {
			warnings = append(warnings, it.where+": "+w)
		} else if w := nonStandardScript(s); w != "" {
			warnings = append(warnings, it.where+": "+w)
		}
	}
	return warnings, nil
}

// outputTemplates are the standard output scripts of a fixed form, as
// hex with the bytes that vary between angle brackets: a script that
// begins as one of them but is shorter was likely cut short.
var outputTemplates = []struct {
	name, fixed, form string
	size              int
}{
	{"P2PKH", "76a914", "76a914<20 bytes>88ac", 25},
	{"P2SH", "a914", "a914<20 bytes>87", 23},
	{"P2WPKH", "0014", "0014<20 bytes>", 22},
	{"P2WSH", "0020", "0020<32 bytes>", 34},
	{"P2TR", "5120", "5120<32 bytes>", 34},
}

// nonStandardScript says, of a watched script s that parses but is no
// standard output script (P2PK, P2PKH, P2SH, P2WPKH, P2WSH, P2TR, another
// witness version, bare multisig or OP_RETURN), that it is watched as
// given but that few outputs, if any, pay it, with its parsed form and, when it
// begins as a standard script does and is shorter (two bytes at least),
// that script's form. "" for a standard script.
func nonStandardScript(s []byte) string {
	if txscript.GetScriptClass(s) != txscript.NonStandardTy {
		return ""
	}
	asm, err := txscript.DisasmString(s)
	if err != nil {
		return "" // scriptParseError has refused it
	}
	if len(asm) > 120 {
		asm = asm[:120] + "..."
	}
	h := hex.EncodeToString(s)
	for _, t := range outputTemplates {
		if len(s) >= 2 && len(s) < t.size && strings.HasPrefix(h, t.fixed[:min(len(h), len(t.fixed))]) {
			return fmt.Sprintf("%s: %s, not a standard output script (a %s script is %s): nothing may pay it; did you cut it short?", h[:min(len(h), 80)], asm, t.name, t.form)
		}
	}
	return fmt.Sprintf("%s: %s, not a standard output script (P2PKH, P2SH, P2WPKH, P2WSH, P2TR, bare multisig or OP_RETURN): nodes do not relay a transaction paying it (only a miner may put one in a block); it is watched as given (a typo?)", h[:min(len(h), 80)], asm)
}

// scriptParseError is why the script s does not parse into opcodes and
// their pushes (a push that runs past its end), nil when it does.
func scriptParseError(s []byte) error {
	tok := txscript.MakeScriptTokenizer(0, s)
	for tok.Next() {
	}
	return tok.Err()
}

// hashNotScript says, of a watched script s of 20 or 32 bytes that is no
// standard script, that it is read as a script but is likely a hash
// given where its script was meant (a txid, a key or script hash), and
// what to give instead: no output pays such bytes, and the scan would
// find nothing without a word. "" for any other script.
func hashNotScript(s []byte) string {
	if txscript.GetScriptClass(s) != txscript.NonStandardTy {
		return ""
	}
	switch len(s) {
	case 20:
		return fmt.Sprintf("%x is 20 bytes read as an output script, which is no standard one: a key or script hash? watch the address, or the script that pays it: 76a914%x88ac (P2PKH), 0014%x (P2WPKH), a914%x87 (P2SH)", s, s, s, s)
	case 32:
		return fmt.Sprintf("%x is 32 bytes read as an output script, which is no standard one: a txid? to find its outputs' spends watch them as TXID:VOUT; a witness program's script is 0020%x (P2WSH) or 5120%x (P2TR)", s, s, s)
	}
	return ""
}

// checkBIP37Watch builds the BIP 37 filter of the watch list once, before
// connecting: a script without data pushes cannot be put in a Bloom
// filter (bad input, naming the item), and a filter that matches
// everything or nearly so is warned of.
//
// from is the flag that set the rate: the warnings name it.
func checkBIP37Watch(items []watchItem, opt client.BIP37Options, from string) ([]string, error) {
	watch := watchOf(items)
	name := "--fprate"
	if from == "--privacy-target" {
		name = "--privacy-target's rate"
	}
	f, err := client.NewWatchFilter(watch, opt.Sizing, opt.FPRate, 0, opt.Flags)
	if err != nil {
		// Name the item as the other watch errors do.
		for _, it := range items {
			if _, err := client.NewWatchFilter([]client.WatchItem{it.item}, opt.Sizing, opt.FPRate, 0, opt.Flags); err != nil {
				return nil, badInput("%s: script %x has no data push a BIP 37 filter can match (--mode bip157 can watch it)", it.where, it.item.Script)
			}
		}
		return nil, badInputWords("--watch", err)
	}
	st := f.Stats()
	if st.HashFuncs == 0 || st.SizeBytes == 0 {
		// As bloom new refuses it: a filter that matches everything.
		return nil, badInput("--fprate %v: the BIP 37 filter of the watch list would match everything (%s, %s: Core's sizing gives a hash function only for rates up to about %.2f); give a lower --fprate",
			opt.FPRate, plural(st.SizeBytes, "byte"), plural(st.HashFuncs, "hash function"), math.Exp(-2*math.Ln2*math.Ln2))
	}
	var warnings []string
	if st.BitsSet == st.SizeBits {
		warnings = append(warnings, fmt.Sprintf("%s %v: the BIP 37 filter of the watch list has every bit set and matches everything", name, opt.FPRate))
	}
	if opt.FPRate >= 0.1 {
		warnings = append(warnings, fmt.Sprintf("%s %g: the filter matches about %.0f%% of all transactions; the node downloads them all to you", name, opt.FPRate, 100*opt.FPRate))
	}
	// Core's sizing gives log2(1/rate) hash functions, at most 50.
	if need := -math.Log2(opt.FPRate); need >= bip37.MaxHashFuncs+1 {
		warnings = append(warnings, fmt.Sprintf("%s %v: the rate needs about %.0f hash functions and a filter has at most %d; the filter's false-positive rate is about %.3g with the watch list in, not %v",
			name, opt.FPRate, need, bip37.MaxHashFuncs, st.FalsePositiveRate, opt.FPRate))
	}
	return warnings, nil
}

// executeScan connects, syncs the headers and scans, or with --follow
// follows the chain until interrupted (and returns no result).
func (a *app) executeScan(ctx context.Context, plan *scanPlan) (*client.ScanResult, error) {
	onHeaders, headersDone := a.headerBar()
	cfg := plan.client
	cfg.OnHeaders = onHeaders
	c, err := client.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	echoes, err := dropEchoes(c, cfg.Params, plan.nodes)
	if err != nil {
		return nil, err
	}
	plan.warnings = append(plan.warnings, echoes...)
	if err := a.checkServices(c, plan.mode); err != nil {
		return nil, err
	}
	saved := c.Chain().Height() // the chain loaded from --datadir, if any
	_, err = c.SyncHeaders(ctx)
	headersDone()
	if err != nil {
		return nil, err
	}
	if err := savedChainNotExtended(c, cfg.DataDir, saved, cfg.Params); err != nil {
		return nil, err
	}
	tip := c.Chain().Height()
	if err := heightsOnChain(plan.from, plan.to, tip, "nodes'"); err != nil {
		return nil, err
	}
	if plan.follow {
		return nil, a.follow(ctx, c, plan, plan.from)
	}
	last := plan.to
	if last < 0 {
		last = tip
	}
	progress, finish := a.progressBar(int(last-plan.from) + 1)
	defer finish()
	req := client.ScanRequest{Watch: plan.watchReversed(), From: plan.from, To: plan.to, Progress: progress, Leak: plan.mode == "bip157"}
	if plan.mode == "bip37" {
		return c.ScanBIP37(ctx, req, plan.bip37)
	}
	return c.ScanBIP157(ctx, req)
}

// savedChainNotExtended fails a scan whose chain, loaded from the data
// directory up to height saved, no peer in use extends: each is on a
// branch of its own, with less work, that leaves the saved chain below
// its tip (a regtest node restarted, which mines a new chain). The scan
// could only reach where they leave it, and would say so in words that
// hide the cause.
func savedChainNotExtended(c *client.Client, datadir string, saved int32, params *chaincfg.Params) error {
	if datadir == "" || saved <= 0 {
		return nil
	}
	var forks []string
	for _, p := range c.Peers() {
		switch {
		case p.Banned || p.Reason != "":
			continue // not in use
		case p.Branch == nil:
			return nil // on the saved chain, at its tip or behind
		}
		forks = append(forks, fmt.Sprintf("peer %s leaves it after height %d for a chain of its own to height %d", p.Address, p.Branch.Fork, p.Branch.Height))
	}
	if len(forks) == 0 {
		return nil
	}
	// The network's state alone: removing datadir would take the other
	// networks' with it.
	remove := fmt.Sprintf("remove %s (%s's state alone, its address book and bans too) to start afresh", filepath.Join(datadir, params.Name), params.Name)
	what := "give nodes of that chain, or another --datadir (or " + remove + ")"
	if params.Name == chaincfg.RegressionNetParams.Name {
		what = "a regtest node restarted deletes its chain and mines a new one: give another --datadir, or " + remove
	}
	return fmt.Errorf("--datadir %s: the nodes' chain does not extend the chain saved there (tip %d, more work than theirs): %s; %s",
		datadir, c.Chain().Height(), strings.Join(forks, "; "), what)
}

// newScanJSON shapes a scan's result for --json and the text output.
func newScanJSON(plan *scanPlan, res *client.ScanResult, took time.Duration) scanJSON {
	out := scanJSON{
		FilteringPeer: orNull(res.FilteringPeer), Network: plan.network, Mode: plan.mode, From: res.From, To: res.To,
		Matches:             []scanMatchJSON{},
		BlocksScanned:       res.BlocksScanned,
		FiltersReceived:     res.FiltersReceived,
		MerkleBlocks:        res.MerkleBlocksReceived,
		BlocksFetched:       res.BlocksFetched,
		FalsePositiveBlocks: res.FalsePositiveBlocks,
		SpendOnlyBlocks:     append([]int32{}, res.SpendOnlyBlocks...),
		FilterReloads:       res.FilterReloads,
		Disconnected:        []string{},
		BytesReceived:       res.BytesReceived,
		Seconds:             took.Seconds(),
		OnePeerHeights:      []onePeerJSON{},
		Conflicts:           []conflictJSON{},
		Peers:               peersJSON(res.Peers, plan.client.Params),
		Cover:               res.Cover,
		Warnings:            orEmpty(append(append([]string(nil), plan.warnings...), byFlag(res.Warnings, plan.items, plan.client.Params, plan.client.DataDir)...)),
	}
	if k := res.Cover; k != nil && !k.Met {
		out.Warnings = append(out.Warnings, fmt.Sprintf("--privacy-target %g not met, the wallet's blocks fetched all the same: %s", k.Target, k.Why))
	}
	for _, o := range res.OnePeer {
		out.OnePeerHeights = append(out.OnePeerHeights, onePeerJSON{From: o.From, To: o.To, Peer: o.Peer})
	}
	for _, k := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, conflictJSON{Height: k.Height, BlockHash: k.BlockHash.String(), Sides: k.Sides, Undecided: k.Undecided})
	}
	for _, h := range res.Disconnected {
		out.Disconnected = append(out.Disconnected, h.String())
	}
	hinted := map[int]bool{}
	for _, m := range res.Matches {
		j := scanMatchJSON{
			Txid: m.Txid.String(), Height: m.Height, BlockHash: m.BlockHash.String(),
			Watch: []string{}, FalsePositive: m.FalsePositive,
		}
		for _, i := range m.WatchItems {
			if i < len(plan.items) {
				j.Watch = append(j.Watch, plan.items[i].given)
				continue
			}
			// The spend of a reversed outpoint: hinted, not a match.
			if k := plan.reversedOf[i-len(plan.items)]; !hinted[k] {
				hinted[k] = true
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s: transaction %s at height %d spends the outpoint with its txid byte-reversed, %s: give txids in display byte order, as RPC shows them",
					plan.items[k].where, m.Txid, m.Height, plan.reversed[i-len(plan.items)].OutPoint))
			}
		}
		if len(j.Watch) == 0 && !m.FalsePositive {
			continue
		}
		if m.FalsePositive {
			out.FalsePositiveTxs++
		}
		out.Matches = append(out.Matches, j)
	}
	switch {
	case res.Leak != nil:
		out.Leak = res.Leak
		out.Warnings = append(out.Warnings, leakWarningsOf(res.Leak)...)
	case plan.bip37Rate != nil:
		l, err := plan.bip37Rate.bip37Leak(res, out.FalsePositiveTxs)
		if err != nil {
			out.Warnings = append(out.Warnings, err.Error())
			break
		}
		out.Leak = l
	}
	return out
}

// checkServices refuses, right after the handshake, a scan no connected
// peer can serve, saying what each offers, how a node serves what the
// mode needs, and the other mode.
func (a *app) checkServices(c *client.Client, mode string) error {
	need, name, other := wire.SFNodeCF, "NODE_COMPACT_FILTERS (BIP 157)", "bip37"
	how := "Bitcoin Core with blockfilterindex=1 and peerblockfilters=1, btcd without --nocfilters"
	if mode == "bip37" {
		need, name, other = wire.SFNodeBloom, "NODE_BLOOM (BIP 37)", "bip157"
		how = "Bitcoin Core with peerbloomfilters=1, btcd without --nopeerbloomfilters"
	}
	if c.Serves(need) {
		return nil
	}
	var seen []string
	for _, p := range c.Peers() {
		seen = append(seen, "peer "+p.Address+" offers "+servicesText(p.Services))
	}
	err := fmt.Errorf("%w: %s not advertised by %s", peer.ErrMissingService, name, strings.Join(seen, ", "))
	return &restated{fmt.Sprintf("no peer offers %s, which a %s scan needs (%s): give a node that does (%s), or scan with --mode %s",
		name, mode, strings.Join(seen, "; "), how, other), err}
}

func (a *app) printScan(out *scanJSON) error {
	w := a.stdout
	found := 0
	for _, m := range out.Matches {
		if m.FalsePositive {
			fmt.Fprintf(w, "%s  height %d  block %s  false positive (involves no watch item)\n", m.Txid, m.Height, m.BlockHash)
			continue
		}
		found++
		fmt.Fprintf(w, "%s  height %d  block %s  watch %s\n", m.Txid, m.Height, m.BlockHash, strings.Join(m.Watch, ","))
	}
	fmt.Fprintf(w, "scanned %s (%d..%d) with %s in %.1fs\n", plural(out.BlocksScanned, "block"), out.From, out.To, out.Mode, out.Seconds)
	for _, p := range out.Peers {
		state := fmt.Sprintf("used (%s)", p.tipText())
		switch {
		case p.Banned:
			state = "banned: " + p.why()
		case p.why() != "":
			state = "not used: " + p.why()
		case out.Mode == "bip157" && !p.Compared:
			state = fmt.Sprintf("not compared with another peer (%s)", p.tipText())
		}
		fmt.Fprintf(w, "%s: %s\n", p.named(), state)
	}
	if out.Mode == "bip157" {
		fmt.Fprintf(w, "filters received: %d, blocks fetched: %d, false-positive blocks: %d\n",
			out.FiltersReceived, out.BlocksFetched, out.FalsePositiveBlocks)
	} else {
		fmt.Fprintf(w, "merkle blocks received: %d, false-positive blocks: %d, false-positive transactions: %d, filter reloads: %d\n",
			out.MerkleBlocks, out.FalsePositiveBlocks, out.FalsePositiveTxs, out.FilterReloads)
	}
	if len(out.Disconnected) > 0 {
		fmt.Fprintf(w, "blocks disconnected by a reorganization: %d\n", len(out.Disconnected))
	}
	if len(out.Conflicts) > 0 {
		fmt.Fprintf(w, "blocks whose filter the peers disagree on, which the block cannot decide, scanned whole: %d\n", len(out.Conflicts))
	}
	if _, err := fmt.Fprintf(w, "bytes received: %d, transactions found: %d\n", out.BytesReceived, found); err != nil {
		return err
	}
	if out.Cover != nil {
		if _, err := fmt.Fprintln(w, coverLine(out.Cover)); err != nil {
			return err
		}
	}
	var line string
	switch l := out.Leak.(type) {
	case *leak.Leak:
		line = leakLine(l)
	case *bip37LeakJSON:
		line = bip37LeakLine(l)
	default:
		return nil
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// leakWarningsOf are the warnings of a BIP 157 scan's leak report, as
// the scan's own warnings repeat them: what limits its figures, and
// where they read high or low (a session of few blocks: leak.FewBlocks).
func leakWarningsOf(l *leak.Leak) []string {
	out := make([]string, len(l.Warnings))
	for i, w := range l.Warnings {
		out[i] = "leak: " + w
	}
	return out
}

// leakLine says in one line what the peers could conclude about the
// watch list: all of them together, then the single peer that could
// conclude the most. Scripts the attack cannot tell from others (a
// payer's change beside a payment) are counted apart: the peers know
// that one of a group's scripts is the wallet's.
func leakLine(l *leak.Leak) string {
	col := l.Collusion
	line := fmt.Sprintf("leak: the peers together, seeing every block fetched, would attribute %s%d of your %s at >= 0.95 (%d at >= 0.5, %s)%s",
		atMost(col), col.Confident, plural(l.WatchedScripts, "script"), col.Likely, highestText(col), groupText(col))
	var top *leak.PeerLeak
	for i := range l.Peers {
		p := &l.Peers[i]
		if top == nil || p.GroupConfident > top.GroupConfident ||
			p.GroupConfident == top.GroupConfident && (p.Confident > top.Confident || p.Confident == top.Confident && p.BlocksFetched > top.BlocksFetched) {
			top = p
		}
	}
	if top == nil || top.Address == nil {
		return line
	}
	switch {
	case col.BlocksFetched == 0:
		return line + "; no block was fetched"
	case len(l.Peers) == 1:
		return line + fmt.Sprintf("; one peer, %s, saw all %s", *top.Address, plural(top.BlocksFetched, "block"))
	}
	return line + fmt.Sprintf("; no single peer more than %s%d, %d in groups (%s saw %d of %s)",
		atMost(*top), top.Confident, top.GroupConfident, *top.Address, top.BlocksFetched, plural(col.BlocksFetched, "block"))
}

// atMost is "at most " for a view whose figures are upper bounds.
func atMost(p leak.PeerLeak) string {
	if p.Conservative {
		return "at most "
	}
	return ""
}

// highestText names a view's highest posterior; a view that fetched
// every block it scanned has none, every candidate matching alike.
func highestText(p leak.PeerLeak) string {
	switch {
	case p.Highest == nil && p.BlocksFetched > 0 && p.BlocksFetched == p.BlocksScanned:
		return "every block scanned was fetched: every candidate matches, and the downloads reveal nothing"
	case p.Highest == nil:
		return "none matched"
	}
	return fmt.Sprintf("highest %.2f", *p.Highest)
}

// groupText says what groups reveal beyond the scripts attributed alone.
func groupText(p leak.PeerLeak) string {
	if p.GroupConfident <= p.Confident {
		return ""
	}
	return fmt.Sprintf(", and at >= 0.95 %s%d of them each among at most %s one of which is yours",
		atMost(p), p.GroupConfident, plural(p.LargestConfidentGroup, "script"))
}

// progressBar returns a progress callback drawing on standard error when
// it is a terminal, and a function that removes the bar.
func (a *app) progressBar(total int) (func(done, total int), func()) {
	return a.bar("scanning blocks", total)
}

// bar returns a progress callback for total steps, described by what,
// drawing on standard error when it is a terminal, and a function that
// removes the bar. A total below 0 is unknown: the bar then spins until
// removed.
func (a *app) bar(what string, total int) (func(done, total int), func()) {
	if a.newBar != nil {
		return a.newBar(what, total)
	}
	f, ok := a.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total >= 0 && total < 2 {
		return nil, func() {}
	}
	if total < 0 {
		spin := progressbar.NewOptions(-1, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(what),
			progressbar.OptionSpinnerType(14), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					spin.Add(1)
				}
			}
		}()
		return func(int, int) {}, func() { close(stop); <-done; spin.Finish() }
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	return func(done, total int) {
		if total > bar.GetMax() {
			bar.ChangeMax(total)
		}
		bar.Set(done)
	}, func() { bar.Finish() }
}

// headerBar returns the OnHeaders callback of a client: a bar for the
// header sync, on a terminal, created when the first batch comes.
func (a *app) headerBar() (func(height, announced int32), func()) {
	var set func(done, total int)
	finish := func() {}
	return func(height, announced int32) {
			if set == nil {
				set, finish = a.bar("syncing headers", int(max(announced, height)))
				if set == nil {
					set = func(int, int) {}
				}
			}
			set(int(height), int(max(announced, height)))
		}, func() {
			finish()
		}
}
