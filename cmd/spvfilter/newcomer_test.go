package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestNewcomerErrors: what a newcomer's pass over every command (a wrong
// value for each flag, missing inputs, files of another kind, a node that
// refuses the connection) found answered without naming the flag, the
// file's line or what is wanted, or accepted without a word.
func TestNewcomerErrors(t *testing.T) {
	dir := t.TempDir()
	const clear = `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterclear"}`
	captures := map[string]string{
		"data.jsonl":    clear + "\n" + `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filteradd","data":"zz"}`,
		"unknown.jsonl": clear + "\n\n" + `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterclear","dat":"00"}`,
		"stop.jsonl":    `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"getcfilters","filter_type":0,"start_height":1,"stop_hash":"ab"}`,
		"time.jsonl":    `{"time":7,"client":"127.0.0.1:5","command":"filterclear"}`,
	}
	for name, text := range captures {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	universe := filepath.Join(dir, "universe.txt")
	if err := os.WriteFile(universe, []byte(coreElem1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "none.idx")
	bloomJSON := filepath.Join(dir, "bloom.json")
	if stdout, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "1", "--fprate", "0.01", "--json", "00"); status != exitOK {
		t.Fatalf("bloom new: %s", stderr)
	} else if err := os.WriteFile(bloomJSON, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	windows := map[string]string{
		"bom.hex":    "\ufeff" + corePayload + "\r\n",
		"bom.txt":    "\ufeff" + coreElem1 + "\r\n",
		"utf16.hex":  "\xff\xfe0\x003\x00",
		"utf16n.hex": "0\x003\x00\r\x00\n\x00",
	}
	for name, text := range windows {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	watchFile := filepath.Join(dir, "watch.txt")
	if err := os.WriteFile(watchFile, []byte("0014"+strings.Repeat("ab", 20)+"\n6a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	capturePath := func(name string) string { return filepath.Join(dir, name) }
	const node = "127.0.0.1:1"
	model := []string{"privacy", "model", "--addresses", "10", "--fprate", "0.001"}
	rows := []contractRow{
		{name: "a capture field that is not hex", args: []string{"privacy", "analyze", "--capture", capturePath("data.jsonl"), "--universe", universe},
			status: exitBadInput, stderr: []string{"--capture " + capturePath("data.jsonl") + `, line 2, field "data": invalid hex character 'z'`}},
		{name: "an unknown capture field", args: []string{"privacy", "analyze", "--capture", capturePath("unknown.jsonl"), "--universe", universe},
			status: exitBadInput, stderr: []string{"--capture " + capturePath("unknown.jsonl") + `, line 3, field "dat": no capture record has this field`}, notInErr: []string{"json:"}},
		{name: "a capture stop hash given to fetches", args: []string{"privacy", "fetches", "--capture", capturePath("stop.jsonl"), "--index", index},
			status: exitBadInput, stderr: []string{"--capture " + capturePath("stop.jsonl") + `, line 1, field "stop_hash": getcfilters stop_hash "ab" is not 64 hex digits`}},
		{name: "a capture time that is no string", args: []string{"privacy", "analyze", "--capture", capturePath("time.jsonl"), "--universe", universe},
			status: exitBadInput, stderr: []string{"--capture " + capturePath("time.jsonl") + `, line 1, field "time": `}},
		{name: "a sweep value that is no number says what an item may be", args: append(model, "--sweep", "addresses=x"),
			status: exitBadInput, stderr: []string{`--sweep "addresses=x": addresses: "x": "x" is not a number; want each comma-separated item a number, START..END, START..END:STEP or START..END:xFACTOR`}},
		{name: "a swept value that another flag refuses names the sweep", args: []string{"privacy", "model", "--addresses", "2", "--universe-size", "5", "--sweep", "addresses=1..10"},
			status: exitBadInput, stderr: []string{`--universe-size 5: smaller than the wallet's 6 addresses, which it includes (at addresses=6 of --sweep "addresses=1..10")`}},
		{name: "--plot-j of a sweep too long for its curves, refused before it runs", args: append(model, "--sweep", "addresses=1..10000", "--plot-j", filepath.Join(dir, "j.svg")),
			status: exitBadInput, stderr: []string{`--plot-j ` + filepath.Join(dir, "j.svg") + `: --sweep "addresses=1..10000" gives 10000 values, and --plot-j draws one curve of P_h(j) per value, at most 20`}, notInErr: []string{"1 filters"}},
		{name: "--plot-j of more filters than curves", args: append(model, "--filters", "30", "--plot-j", filepath.Join(dir, "j.svg")),
			status: exitBadInput, stderr: []string{"--filters 30, and --plot-j draws one curve of P_h(j) per number of filters, at most 20"}},
		{name: "--seed without --monte-carlo", args: append(model, "--seed", "5"),
			status: exitBadInput, stderr: []string{"--seed is used only with --monte-carlo"}},
		{name: "--monte-carlo-sample without --monte-carlo", args: append(model, "--monte-carlo-sample", "5"),
			status: exitBadInput, stderr: []string{"--monte-carlo-sample is used only with --monte-carlo"}},
		{name: "a P beyond a byte", args: []string{"lab", "--connect", node, "--network", "regtest", "--p-min", "300"},
			status: exitBadInput, stderr: []string{`--p-min "300": want a whole number from 1 to 32`}, notInErr: []string{"is not a number"}},
		{name: "a P that is no number", args: []string{"lab", "--connect", node, "--network", "regtest", "--p-max", "x"},
			status: exitBadInput, stderr: []string{`--p-max "x": want a whole number from 1 to 32`}},
		{name: "lab's negative --from", args: []string{"lab", "--connect", node, "--network", "regtest", "--from", "-1"},
			status: exitBadInput, stderr: []string{"--from -1: want a height, a whole number from 0 to 2147483647"}},
		{name: "lab's negative --to", args: []string{"lab", "--connect", node, "--network", "regtest", "--to", "-1"},
			status: exitBadInput, stderr: []string{"--to -1: want a height, a whole number from 0 to 2147483647"}},
		{name: "lab's --to that is no number", args: []string{"lab", "--connect", node, "--network", "regtest", "--to", "x"},
			status: exitBadInput, stderr: []string{`--to "x": want a height, a whole number from 0 to 2147483647`}},
		{name: "a covered regime's target out of range named by its flag", args: []string{"privacy", "simulate", "--out", filepath.Join(dir, "sim"), "--regime", "covered", "--cover-target", "2"},
			status: exitBadInput, stderr: []string{"--cover-target 2: want a probability in (0, 1), the target the covered regime's clients draw covers to, such as --cover-target 0.5"}, notInErr: []string{"fetch.cover_target"}},
		{name: "--cover-target without the covered regime", args: []string{"privacy", "simulate", "--out", filepath.Join(dir, "sim"), "--cover-target", "0.5"},
			status: exitBadInput, stderr: []string{"--cover-target is for --regime covered"}},
		{name: "a proof that does not verify names its flag", args: []string{"merkleblock", "verify", "--merkleblock", strings.Repeat("00", 80) + "01000000" + "01" + strings.Repeat("11", 32) + "01" + "01"},
			status: exitFailure, stderr: []string{"spvfilter: --merkleblock: block ", ": invalid proof: "}},
		{name: "a watch item BIP 37 cannot match, named by its flag and line", args: []string{"scan", "--connect", node, "--network", "regtest", "--mode", "bip37", "--watch", "@" + watchFile},
			status: exitBadInput, stderr: []string{"--watch 1 (@" + watchFile + " line 2): script 6a has no data push a BIP 37 filter can match"}, notInErr: []string{"--watch 2"}},
		{name: "standard input given to a flag that reads a file only", args: []string{"privacy", "analyze", "--capture", "-", "--universe", universe},
			status: exitBadInput, stderr: []string{"--capture -: --capture does not read standard input: give a file"}, notInErr: []string{"no such file"}},
		{name: "standard input given for labels", args: []string{"privacy", "evaluate", "--labels", "-", "--report", universe},
			status: exitBadInput, stderr: []string{"--labels -: --labels does not read standard input: give a file"}, notInErr: []string{"no such file"}},
		{name: "Bitcoin Core's network flag", args: []string{"scan", "--regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{"--regtest: no such flag (did you mean --network regtest?)"}},
		{name: "Bitcoin Core's testnet flag", args: []string{"peers", "--testnet"},
			status: exitBadInput, stderr: []string{"--testnet: no such flag (did you mean --network testnet3 or --network testnet4?)"}},
		{name: "scan's node flag given to universe", args: []string{"privacy", "universe", "--connect", node, "--out", "-"},
			status: exitBadInput, stderr: []string{"--connect: no such flag (did you mean --peer?)"}},
		{name: "a node flag of no command", args: []string{"scan", "--node", node, "--watch", "51"},
			status: exitBadInput, stderr: []string{"--node: no such flag (did you mean --connect?)"}, notInErr: []string{"--mode"}},
		{name: "both plots into one file", args: append(model, "--plot", filepath.Join(dir, "m.svg"), "--plot-j", dir+"/./m.svg"),
			status: exitBadInput, stderr: []string{"--plot-j " + dir + "/./m.svg: the same file as --plot"}},
		{name: "the universe and its index into one file", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", filepath.Join(dir, "u.txt"), "--index", dir + "/./u.txt"},
			status: exitBadInput, stderr: []string{"--index " + dir + "/./u.txt: the same file as --out"}},
		{name: "lab's blocks and plot into one file", args: []string{"lab", "--connect", node, "--network", "regtest", "--save-blocks", filepath.Join(dir, "l.svg"), "--plot", filepath.Join(dir, "l.svg")},
			status: exitBadInput, stderr: []string{"--plot " + filepath.Join(dir, "l.svg") + ": the same file as --save-blocks"}},
		{name: "two nodes in one --connect", args: []string{"scan", "--connect", "127.0.0.1:1,127.0.0.1:2", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{`--connect "127.0.0.1:1,127.0.0.1:2": several addresses in one: give one per flag, and the flag again for each other node`}, notInErr: []string{"colons", "IPv6"}},
		{name: "two nodes in one --peer, space apart", args: []string{"peers", "--peer", "127.0.0.1:1 127.0.0.1:2", "--network", "regtest"},
			status: exitBadInput, stderr: []string{`--peer "127.0.0.1:1 127.0.0.1:2": several addresses in one`}},
		{name: "an extended public key to watch", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "tpubD6NzVbkrYhZ4XgiXtGrdW5XDAPFCL9h7we1vwNCpn8tGbBcgfVYjXyhWo4E1xkh56hjod1RhGjxbaTLV3X4FyWuejifB9jusQ46QzG87VKp"},
			status: exitBadInput, stderr: []string{"--watch 1: tpubD6NzVbkr... is an extended public key: scan watches addresses, output scripts and outpoints, not keys to derive from"}, notInErr: []string{"hex character"}},
		{name: "an extended private key to watch is not repeated", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "tprv8ZgxMBicQKsPd7Uf69XL1XwhmjHopUGep8GuEiJDZmbQz6o58LninorQAfcKZWARbtRtfnLcJ5MQ2AtHcQJCCRUcMRvmDUjyEmNUWwx8UbK"},
			status: exitBadInput, stderr: []string{"--watch 1: an extended private key, which scan never needs"}, notInErr: []string{"tprv8Zgx", "hex character"}},
		{name: "an output descriptor to watch", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "wpkh(02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9)"},
			status: exitBadInput, stderr: []string{"--watch 1: wpkh(...) is an output descriptor: give the addresses or scripts it derives"}},
		{name: "an output descriptor as an outpoint's script", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", strings.Repeat("00", 32) + ":0:tr(abc)"},
			status: exitBadInput, stderr: []string{"tr(...) is an output descriptor"}},
		{name: "an address as a Bloom filter element", args: []string{"bloom", "match", "--filter", corePayload, "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"},
			status: exitBadInput, stderr: []string{"element 1: bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 is a regtest address, not hex: its output script is 0014751e76e8199196d454941c45d1b3a323f1433bd6, the data it carries 751e76e8199196d454941c45d1b3a323f1433bd6"}, notInErr: []string{"invalid hex character"}},
		{name: "an address as a compact filter element", args: []string{"gcs", "match", "--filter", "00", "--block-hash", strings.Repeat("00", 32), "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"},
			status: exitBadInput, stderr: []string{"element 1: 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 is a mainnet address, not hex: its output script is 76a91477bff20c60e522dfaa3350c39b030a5d004e839a88ac"}},
		{name: "a data directory with a ~ no shell expanded", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--datadir=~/state"},
			status: exitBadInput, stderr: []string{`--datadir "~/state": the shell did not expand ~`}},
		{name: "a plot with a ~ no shell expanded", args: append(model, "--plot=~/m.svg"),
			status: exitBadInput, stderr: []string{`--plot "~/m.svg": the shell did not expand ~`}},
		{name: "a capture with a ~ no shell expanded", args: []string{"privacy", "fetches", "--capture=~/c.jsonl", "--index", index},
			status: exitBadInput, stderr: []string{`--capture "~/c.jsonl": the shell did not expand ~`}},
		{name: "@ and a ~ no shell expands", args: []string{"bloom", "inspect", "--filter", "@~/no-such-filter.hex"},
			status: exitBadInput, stderr: []string{"--filter @~/no-such-filter.hex: no such file or directory (the shell expands a ~ only at the start of a word, not after @ or =: write $HOME in place of ~)"}},
		{name: "a command's JSON output as hex input", args: []string{"bloom", "inspect", "--filter", "@" + bloomJSON},
			status: exitBadInput, stderr: []string{"--filter: @" + bloomJSON + ` holds JSON, not hex (a command's --json output?): give the hex of its field "filterload" (jq -r .filterload prints it)`}, notInErr: []string{"lines"}},
		{name: "a long flag with one dash", args: []string{"scan", "--watch", "51", "-json"},
			status: exitBadInput, stderr: []string{"-json: a flag's name takes two dashes: --json"}, notInErr: []string{"-j:", "--to"}},
		{name: "a long flag and its value with one dash", args: []string{"bloom", "new", "-elements=3", "--fprate", "0.1"},
			status: exitBadInput, stderr: []string{"-elements: a flag's name takes two dashes: --elements"}},
		{name: "a hex file with a UTF-8 byte order mark", args: []string{"bloom", "inspect", "--filter", "@" + filepath.Join(dir, "bom.hex")},
			status: exitOK},
		{name: "an item file with a UTF-8 byte order mark", args: []string{"bloom", "match", "--filter", corePayload, "@" + filepath.Join(dir, "bom.txt")},
			status: exitOK, stdout: []string{coreElem1 + " true"}},
		{name: "a UTF-16 hex file with its byte order mark", args: []string{"bloom", "inspect", "--filter", "@" + filepath.Join(dir, "utf16.hex")},
			status: exitBadInput, stderr: []string{"utf16.hex is UTF-16 text (as Windows PowerShell writes with >): save it as UTF-8 or ASCII"}, notInErr: []string{"binary"}},
		{name: "a UTF-16 hex file without one", args: []string{"bloom", "inspect", "--filter", "@" + filepath.Join(dir, "utf16n.hex")},
			status: exitBadInput, stderr: []string{"utf16n.hex is UTF-16 text"}, notInErr: []string{"lines"}},
		{name: "a regtest address without --network", args: []string{"scan", "--connect", node, "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"},
			status: exitBadInput, stderr: []string{"--watch 1: bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 is a regtest address, not a mainnet one: give --network regtest (the network is mainnet unless --network says otherwise), or an address of mainnet"}},
		{name: "a testnet address on regtest", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
			status: exitBadInput, stderr: []string{"is a testnet (testnet3, testnet4 and signet) address, not a regtest one: give --network testnet3, testnet4 or signet, or an address of regtest"}, notInErr: []string{"unless --network"}},
		{name: "a node without its port", args: []string{"scan", "--connect", "localhost", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{`--connect "localhost": no port; want HOST:PORT, such as localhost:8333, with the node's port (by default 8333 mainnet, 18333 testnet3, 48333 testnet4, 38333 signet, 18555 simnet, 18444 regtest)`}},
		{name: "a bracketed IPv6 node without its port", args: []string{"peers", "--peer", "[::1]", "--network", "regtest"},
			status: exitBadInput, stderr: []string{`--peer "[::1]": no port; want HOST:PORT, such as [::1]:8333, with the node's port`}, notInErr: []string{"[[::1]]"}},
		{name: "an address to listen on without its port", args: []string{"privacy", "capture", "--listen", "127.0.0.1", "--upstream", node, "--network", "regtest", "--out", "-"},
			status: exitBadInput, stderr: []string{`--listen "127.0.0.1": no port; want HOST:PORT to listen on, such as 127.0.0.1:0 (this machine only; port 0: any free one)`}},
		{name: "two addresses in one --watch, space apart", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"},
			status: exitBadInput, stderr: []string{`--watch 1: "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080": several items in one: give each its own --watch, or a file of one per line as --watch @FILE`}, notInErr: []string{"bech32", "typo"}},
		{name: "an address and an outpoint in one --watch, comma apart", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080," + strings.Repeat("ab", 32) + ":0"},
			status: exitBadInput, stderr: []string{"several items in one"}, notInErr: []string{"outpoint"}},
		{name: "a hex script with a space is one item", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "0014 751e76e8199196d454941c45d1b3a323f1433bd6"},
			status: exitFailure, stderr: []string{"--connect " + node + ": connection refused"}, notInErr: []string{"several"}},
		{name: "a network name in capitals", args: []string{"scan", "--network", "Regtest", "--connect", node, "--watch", "51"},
			status: exitBadInput, stderr: []string{`--network "Regtest": want one of mainnet, testnet3, testnet4, signet, simnet, regtest (did you mean regtest?)`}},
		{name: "Bitcoin Core's name of mainnet", args: []string{"peers", "--network", "main", "--connect", node},
			status: exitBadInput, stderr: []string{`--network "main": want one of `, "(did you mean mainnet?)"}},
		{name: "the beginning of two network names", args: []string{"lab", "--network", "test", "--connect", node},
			status: exitBadInput, stderr: []string{"(did you mean testnet3 or testnet4?)"}},
		{name: "a network of no kind", args: []string{"lab", "--network", "foo", "--connect", node},
			status: exitBadInput, stderr: []string{`--network "foo": want one of mainnet, testnet3, testnet4, signet, simnet, regtest`}, notInErr: []string{"did you mean"}},
		{name: "an --unban whose port is no number", args: []string{"peers", "--network", "regtest", "--datadir", dir, "--unban", "example.com:bar"},
			status: exitBadInput, stderr: []string{`--unban "example.com:bar": port "bar" is not a number from 1 to 65535`}, notInErr: []string{"no ban of it"}},
		{name: "--privacy-target 0, none, beside --fprate", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", "--mode", "bip37", "--privacy-target", "0", "--fprate", "0.001"},
			status: exitFailure, stderr: []string{"--connect " + node + ": connection refused"}, notInErr: []string{"give one"}},
		{name: "a negative --max-clients says what 0 means", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", "-", "--max-clients", "-1"},
			status: exitBadInput, stderr: []string{"--max-clients -1: want a whole number, at least 0 (0 for the default 64), such as --max-clients 64"}},
	}
	runRows(t, rows)
}

// TestNewcomerUpstreamWords: an --upstream that is not a node of the
// network is told as a --peer or --connect node is (a service that is no
// node, a node of another network, one that hangs up or says nothing),
// not in the socket's words.
func TestNewcomerUpstreamWords(t *testing.T) {
	var testnet [wire.MessageHeaderSize]byte
	binary.LittleEndian.PutUint32(testnet[:4], uint32(wire.TestNet3))
	copy(testnet[4:], "version")
	http, other := peertest.NewAnswering(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")), peertest.NewAnswering(t, testnet[:])
	silent, closer := peertest.NewAnswering(t, nil), newCloser(t)
	capture := func(upstream string) []string {
		return []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", upstream, "--network", "regtest", "--out", "-", "--handshake-timeout", "1s"}
	}
	sockets := []string{"read tcp", "write tcp", "i/o timeout", "connection reset", "broken pipe", "magic", "frame"}
	runRows(t, []contractRow{
		{name: "a service that is no node", args: capture(http), status: exitFailure, notInErr: sockets,
			stderr: []string{"--upstream " + http + ": it answers with what is no regtest message: no regtest node listens there"}},
		{name: "a node of another network", args: capture(other), status: exitFailure, notInErr: sockets,
			stderr: []string{"--upstream " + other + ": it answers with what is no regtest message: it is a testnet3 node, no regtest node listens there (is --network regtest right?)"}},
		{name: "a node that hangs up", args: capture(closer), status: exitFailure, notInErr: sockets,
			stderr: []string{"--upstream " + closer + ": it hung up on the version message"}},
		{name: "a service that says nothing", args: capture(silent), status: exitFailure, notInErr: sockets,
			stderr: []string{"--upstream " + silent + ": no answer to the version message within 1s: no regtest node answers there"}},
	})
}

// TestDiskNoteWords: what the peer packages note about a damaged file of
// a data directory is said in the tool's words, as an error is.
func TestDiskNoteWords(t *testing.T) {
	for _, tc := range []struct{ note, want string }{
		{"bans.json: invalid character 'g' looking for beginning of value: set aside as x", "bans.json: not JSON: 'g' cannot be there: set aside as x"},
		{"bans.json: json: cannot unmarshal array into Go value of type banlist.bansRead: set aside", "bans.json: it holds a list where an object is wanted: set aside"},
		{"bans.json: 1 ban(s) dropped (ban 0: json: cannot unmarshal number into Go struct field banRead.bans.host of type string), 0 kept", `bans.json: 1 ban dropped (ban 0: field "host" holds a number where a string is wanted), 0 kept`},
		{"bans.json: 3 ban(s) dropped", "bans.json: 3 bans dropped"},
		{"bans.json: unexpected EOF: set aside", "bans.json: the data end too early: set aside"},
		{"bans.json: unexpected end of JSON input", "bans.json: not JSON: the data end too early"},
		{"filters.db: not a regular file but d---------: set aside", "filters.db: a directory, not a file: set aside"},
		{"filters.db: not a regular file but L---------", "filters.db: not a regular file"},
		{"address book dd/regtest/peers.json is damaged (x)", "address book dd/regtest/peers.json is damaged (x)"},
	} {
		if got := diskNoteWords(tc.note); got != tc.want {
			t.Errorf("diskNoteWords(%q)\n= %q\nwant %q", tc.note, got, tc.want)
		}
	}
}

// TestNewcomerDamagedBans: peers --datadir names the directory and says
// what is wrong with a damaged ban list in the tool's words, leaving the
// file as it is.
func TestNewcomerDamagedBans(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "regtest"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "regtest", "bans.json"), []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	runRows(t, []contractRow{{name: "a ban list of another shape", args: []string{"peers", "--network", "regtest", "--datadir", dir},
		status: exitOK, stderr: []string{"spvfilter: warning: --datadir " + dir + ": bans.json: it holds a list where an object is wanted: no bans listed; the file is left as it is"},
		notInErr: []string{" json:", "Go value", "banlist."}}})
	if b, err := os.ReadFile(filepath.Join(dir, "regtest", "bans.json")); err != nil || string(b) != "[]" {
		t.Errorf("bans.json after the listing: %q, %v", b, err)
	}
}

// TestNewcomerWrongStore: a data directory whose store says it is of
// another network or format, or nothing spvfilter wrote, is bad input
// naming --datadir and the file, without the text the file should hold.
func TestNewcomerWrongStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "regtest"), 0o700); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, "regtest", "meta")
	if err := os.WriteFile(meta, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "--datadir " + dir + ": " + meta + ` says "garbage", not that it keeps spvfilter's regtest chain`
	hidden := []string{"store:", "want \"spvfilter store", "genesis"}
	runRows(t, []contractRow{
		{name: "scan", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--datadir", dir},
			status: exitBadInput, stderr: []string{want}, notInErr: hidden},
		{name: "peers offline", args: []string{"peers", "--network", "regtest", "--datadir", dir},
			status: exitBadInput, stderr: []string{want}, notInErr: hidden},
	})
}

// TestNewcomerEndlessFile: a device that never ends given as the labels,
// the report or the universe is refused on its first bytes, not read to
// the size limit or for ever (the universe of a binary file likewise).
func TestNewcomerEndlessFile(t *testing.T) {
	const zero = "/dev/zero"
	if _, err := os.Stat(zero); err != nil {
		t.Skipf("no %s here: %v", zero, err)
	}
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte(`{"clients": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "binary.dat")
	if err := os.WriteFile(binary, []byte("\x00\x01\x02 not text\n"+coreElem1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runRows(t, []contractRow{
		{name: "a universe that never ends", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", "/dev/urandom"},
			status: exitBadInput, stderr: []string{"--universe /dev/urandom: binary data, not a universe: want one candidate per line"}},
		{name: "a universe of binary data", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", binary},
			status: exitBadInput, stderr: []string{"--universe " + binary + ": binary data, not a universe"}},
		{name: "a watch list of binary data", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "@" + binary},
			status: exitBadInput, stderr: []string{"--watch 1 (@" + binary + " line 1): binary data: give an address"}, notInErr: []string{"outpoint \"", "hex character"}},
		{name: "labels", args: []string{"privacy", "evaluate", "--labels", zero, "--report", report},
			status: exitBadInput, stderr: []string{"--labels " + zero + ": binary data, not JSON; want the labels.json"}},
		{name: "report", args: []string{"privacy", "evaluate", "--labels", zero, "--report", zero},
			status: exitBadInput, stderr: []string{"--labels " + zero + ": binary data, not JSON"}},
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("refusing %s took %v", zero, took)
	}
}

// TestNewcomerCountsOfOne: the summaries of compare, the advice and lab
// count one of a thing in the singular, and so do the decoders' errors,
// which say what they were reading.
func TestNewcomerCountsOfOne(t *testing.T) {
	vectors := filepath.Join("..", "..", "testvectors", "bip158", "testnet-19.json")
	runRows(t, []contractRow{
		{name: "compare", args: []string{"privacy", "compare", "--blocks", "1", "--wallet-blocks", "1", "--appearances", "1", "--addresses", "1", "--universe-size", "1", "--elements-per-block", "1"},
			status: exitOK, stdout: []string{"node tests 1 address (BIP 37); client scans 1 block of 1 item, 1 with", "chance a script of k=1 block has all fetched"}},
		{name: "advice", args: []string{"privacy", "model", "--addresses", "1", "--universe-size", "1", "--target-p-h-1", "0.5", "--block-txs", "1", "--tx-elements", "1"},
			status: exitOK, stdout: []string{"tests 1 address (wallet included)", "1 transaction, 1 element tested each"}},
		{name: "lab", args: []string{"lab", "--vectors", vectors, "--probes", "1", "--timing", "1ms", "--wallets", "1", "--watched", "1"},
			status: exitOK, stdout: []string{"1 probe per design"}},
		{name: "a compact filter's count cut short", args: []string{"gcs", "inspect", "--filter", "fd"},
			status: exitBadInput, stderr: []string{"--filter: truncated filter: the item count N is a CompactSize of 3 bytes (its first byte is 0xfd), and the filter has 1 byte"}, notInErr: []string{"needs 3 bytes", "have 1"}},
		{name: "a compact filter's count longer than it needs", args: []string{"gcs", "match", "--filter", "fd0500", "--block-hash", strings.Repeat("00", 32), "00"},
			status: exitBadInput, stderr: []string{"--filter: non-canonical CompactSize for N: N=5 written in 3 bytes; its shortest CompactSize takes 1 byte"}},
		{name: "a compact filter of one value cut short", args: []string{"gcs", "inspect", "--filter", "01ffffff"},
			status: exitBadInput, stderr: []string{"--filter: decoding value 0 of 1: truncated filter: stream ends inside a unary code"}},
		{name: "a filterload of one byte", args: []string{"bloom", "inspect", "--filter", "fd"},
			status: exitBadInput, stderr: []string{"--filter: 1 byte is no filterload payload: it ends inside the length"}},
		{name: "a merkleblock's hash count cut short", args: []string{"merkleblock", "verify", "--merkleblock", strings.Repeat("00", 84) + "fe01"},
			status: exitBadInput, stderr: []string{"--merkleblock: merkleblock hash count cut short: payload truncated: a CompactSize of 5 bytes (its first byte is 0xfe), with 2 bytes left"}},
	})
}

// TestHeightsAboveTipOneStatus: a --from or --to above the nodes' chain
// tip is the nodes' answer, a failure (1), in every command that takes
// heights from nodes, named by its flag with the tip to give instead,
// and with --json one JSON object on standard error and nothing on
// standard output.
func TestHeightsAboveTipOneStatus(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 5)
	regtest := []string{"--network", "regtest"}
	commands := []struct {
		name string
		args []string
	}{
		{"scan bip157", append([]string{"scan", "--connect", node.P2PAddr, "--watch", "51"}, regtest...)},
		{"scan bip37", append([]string{"scan", "--connect", node.P2PAddr, "--watch", "0014" + strings.Repeat("ab", 20), "--mode", "bip37"}, regtest...)},
		{"lab with --connect", append([]string{"lab", "--connect", node.P2PAddr, "--probes", "0"}, regtest...)},
		{"lab with --peer", append([]string{"lab", "--peer", node.P2PAddr, "--probes", "0"}, regtest...)},
		{"privacy universe", append([]string{"privacy", "universe", "--peer", node.P2PAddr, "--out", "-"}, regtest...)},
	}
	heights := []struct {
		args []string
		want string
	}{
		{[]string{"--to", "50"}, "--to 50 is above the node"},
		{[]string{"--from", "50"}, "--from 50 is above the node"},
	}
	for _, c := range commands {
		for _, h := range heights {
			args := append(append([]string{}, c.args...), h.args...)
			t.Run(c.name+" "+h.args[0], func(t *testing.T) {
				stdout, stderr, status := runCLI(t, "", args...)
				if status != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 ||
					!strings.Contains(stderr, h.want) || !strings.Contains(stderr, "chain tip 5: give a height up to 5") {
					t.Errorf("%q: status %d, stdout %q, stderr %q: want 1 and %q", args, status, stdout, stderr, h.want)
				}
				stdout, stderr, status = runCLI(t, "", append(args, "--json")...)
				var obj struct {
					Error    string `json:"error"`
					ExitCode int    `json:"exit_code"`
				}
				if status != exitFailure || stdout != "" || json.Unmarshal([]byte(stderr), &obj) != nil ||
					obj.ExitCode != exitFailure || !strings.Contains(obj.Error, h.want) {
					t.Errorf("%q --json: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
				}
			})
		}
	}
}

// TestNewcomerWrongMessage: a block given where a transaction is wanted,
// a transaction or a header alone where a block is, any of them or a
// merkleblock payload where a filter (BIP 37 or BIP 158) or a merkleblock
// payload is, is named as what it is, with its hash, and a block cut
// short says where it ends.
func TestNewcomerWrongMessage(t *testing.T) {
	blockHex := vectorBlockHex(t, block13b8a)
	raw, err := hex.DecodeString(blockHex)
	if err != nil {
		t.Fatal(err)
	}
	var block wire.MsgBlock
	if err := block.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	var tx bytes.Buffer
	if err := block.Transactions[1].Serialize(&tx); err != nil {
		t.Fatal(err)
	}
	txHex, txid := hex.EncodeToString(tx.Bytes()), block.Transactions[1].TxHash().String()
	header := blockHex[:2*wire.MaxBlockHeaderPayload]
	hash := block.BlockHash().String()
	proof, stderr, status := runCLI(t, "", "merkleblock", "build", "--block", blockHex, "--txid", txid)
	if status != exitOK {
		t.Fatalf("merkleblock build: status %d, %s", status, stderr)
	}
	proof = strings.TrimSpace(proof)
	isBlock := fmt.Sprintf("%d bytes are a block (%s, %d transactions)", len(raw), hash, len(block.Transactions))
	isTx := fmt.Sprintf("%d bytes are a transaction (%s)", tx.Len(), txid)
	isProof := fmt.Sprintf("%d bytes are a merkleblock payload (block %s)", len(proof)/2, hash)
	isHeader := "80 bytes are a block header (" + hash + ") alone"
	runRows(t, []contractRow{
		{name: "a block as bloom --filter", args: []string{"bloom", "inspect", "--filter", blockHex},
			status: exitBadInput, stderr: []string{"--filter: " + isBlock + ", not a filterload payload: give the filter"}},
		{name: "a merkleblock payload as merkleblock build --filter", args: []string{"merkleblock", "build", "--block", blockHex, "--filter", proof},
			status: exitBadInput, stderr: []string{"--filter: " + isProof + ", not a filterload payload"}},
		{name: "a header as privacy analyze --filter", args: []string{"privacy", "analyze", "--filter", header, "--universe", "-"},
			status: exitBadInput, stderr: []string{"--filter 1: " + isHeader + ", not a filterload payload"}},
		{name: "a transaction as gcs --filter", args: []string{"gcs", "inspect", "--filter", txHex},
			status: exitBadInput, stderr: []string{"--filter: " + isTx + ", not a BIP 158 basic filter: give the block's basic filter"}},
		{name: "a block as gcs --filter", args: []string{"gcs", "match", "--filter", blockHex, "--block-hash", hash, "51"},
			status: exitBadInput, stderr: []string{"--filter: " + isBlock + ", not a BIP 158 basic filter"}},
		{name: "a block as --merkleblock", args: []string{"merkleblock", "verify", "--merkleblock", blockHex},
			status: exitBadInput, stderr: []string{"--merkleblock: " + isBlock + ", not a merkleblock payload: give a merkleblock message's payload"}},
		{name: "a transaction as --merkleblock", args: []string{"merkleblock", "verify", "--merkleblock", txHex},
			status: exitBadInput, stderr: []string{"--merkleblock: " + isTx + ", not a merkleblock payload"}},
		{name: "a header alone as --merkleblock", args: []string{"merkleblock", "verify", "--merkleblock", header},
			status: exitBadInput, stderr: []string{"--merkleblock: " + isHeader + ", not a merkleblock payload"}},
		{name: "a merkleblock payload as --block", args: []string{"gcs", "build", "--block", proof, "--no-prevouts"},
			status: exitBadInput, stderr: []string{"--block: " + isProof + ", not a whole block"}},
		{name: "a merkleblock payload as --tx", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", proof},
			status: exitBadInput, stderr: []string{"--tx: " + isProof + ", not a transaction"}},
		{name: "a block as --tx", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", blockHex},
			status: exitBadInput, stderr: []string{fmt.Sprintf("--tx: %d bytes are a block (%s, %d transactions), not a transaction: give one transaction", len(raw), hash, len(block.Transactions))}},
		{name: "a block to send", args: []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", blockHex},
			status: exitBadInput, stderr: []string{"TX_HEX: ", "bytes are a block (" + hash}},
		{name: "a transaction as --block", args: []string{"gcs", "build", "--block", txHex, "--no-prevouts"},
			status: exitBadInput, stderr: []string{fmt.Sprintf("--block: %d bytes are a transaction (%s), not a whole block: give the block", tx.Len(), txid)}},
		{name: "a header alone as --block", args: []string{"merkleblock", "build", "--block", header, "--txid", txid},
			status: exitBadInput, stderr: []string{"--block: 80 bytes are a block header (" + hash + ") alone, not a whole block"}},
		{name: "a block cut after its transaction count", args: []string{"gcs", "build", "--block", blockHex[:2*81], "--no-prevouts"},
			status: exitBadInput, stderr: []string{"--block: 81 bytes, not a whole block: the data end too early, after byte 81"}, notInErr: []string{"empty", "no data at all"}},
	})
}

// TestEveryCommandSaysExitStatus: the help of every command that does
// work says its exit statuses, the same three the root's help defines,
// and shows the command in its Examples section.
func TestEveryCommandSaysExitStatus(t *testing.T) {
	root := newRootCommand(&app{stdout: io.Discard, stderr: io.Discard})
	n := 0
	walkCommands(root, func(c *cobra.Command) {
		if c == root || c.HasSubCommands() || c.Name() == "help" || c.Parent().Name() == "completion" {
			return
		}
		n++
		t.Run(c.CommandPath(), func(t *testing.T) {
			stdout, _, status := runCLI(t, "", append(strings.Fields(c.CommandPath())[1:], "--help")...)
			help := oneLine(stdout)
			if status != exitOK || !strings.Contains(help, "Exit status: 0 done") || !strings.Contains(help, "2 bad input, 1 failure") {
				t.Errorf("status %d; help does not say the exit statuses:\n%s", status, stdout)
			}
			// An example of the command in the help's Examples section,
			// where every command shows them (not in the description).
			_, examples, _ := strings.Cut(stdout, "\nExamples:\n")
			if !strings.Contains(examples, "  "+c.CommandPath()) {
				t.Errorf("help has no Examples section with %q:\n%s", c.CommandPath(), stdout)
			}
		})
	})
	if n < 20 {
		t.Errorf("only %d commands", n)
	}
	if help := root.Long; !strings.Contains(help, "Exit status: 0 on success, 2 for bad input") || !strings.Contains(help, "1 for any other failure") {
		t.Errorf("the root's help does not define the exit statuses")
	}
}

// TestNewcomerUnbanAsListed: a ban is lifted with its host as the
// listing shows it: a host alone for a node elsewhere (bans are by
// host), with its port for a node of this machine; a node of this
// machine without its port is told to give it.
func TestNewcomerUnbanAsListed(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "regtest"), 0o700); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	bans := fmt.Sprintf(`{"version":2,"bans":[{"host":"192.0.2.1","reason":"lied","since":"2020-01-01T00:00:00Z","until":%q,"proof":true},`+
		`{"host":"127.0.0.1:18444","reason":"flooded","since":"2020-01-01T00:00:00Z","until":%q}]}`, until, until)
	if err := os.WriteFile(filepath.Join(dir, "regtest", "bans.json"), []byte(bans), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(args ...string) (peersResult, string, int) {
		t.Helper()
		stdout, stderr, status := runCLI(t, "", append([]string{"peers", "--json", "--network", "regtest", "--datadir", dir}, args...)...)
		var out peersResult
		if status == exitOK && json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("stdout %q", stdout)
		}
		return out, stderr, status
	}
	out, _, _ := list()
	if len(out.Bans) != 2 {
		t.Fatalf("bans %+v", out.Bans)
	}
	_, stderr, status := list("--unban", "127.0.0.1")
	if status != exitBadInput || !strings.Contains(stderr, `--unban \"127.0.0.1\": a node of this machine is banned with its port: give 127.0.0.1:PORT as the listing shows it`) {
		t.Errorf("a node of this machine without its port: status %d, stderr %q", status, stderr)
	}
	for _, b := range out.Bans {
		after, stderr, status := list("--unban", b.Host)
		if status != exitOK || len(after.Unbanned) != 1 || after.Unbanned[0] != b.Host {
			t.Errorf("--unban %s as listed: status %d, %+v, stderr %q", b.Host, status, after, stderr)
		}
	}
	if out, _, _ := list(); len(out.Bans) != 0 {
		t.Errorf("bans left: %+v", out.Bans)
	}
	// Bans that cannot be read are not replaced by an --unban.
	link := filepath.Join(dir, "regtest", "bans.json")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone", link); err != nil {
		t.Fatal(err)
	}
	_, stderr, status = list("--unban", "192.0.2.1")
	if target, err := os.Readlink(link); status != exitFailure || err != nil || target != "gone" ||
		!strings.Contains(stderr, link+": a symbolic link to gone, which leads to no file") {
		t.Errorf("--unban with a dangling bans.json: status %d, stderr %q, link %q %v", status, stderr, target, err)
	}
}

// TestUnreachableNodeOneStatus: a node that nothing listens for is a
// failure (1) in every command that talks to nodes, named by the flag
// that gave it, on one line of standard error and, with --json, as one
// JSON object there; standard output stays empty.
func TestUnreachableNodeOneStatus(t *testing.T) {
	const refused = "127.0.0.1:1"
	tx := "01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff00ffffffff0100000000000000000000000000"
	regtest := []string{"--network", "regtest"}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"scan", "--connect", refused, "--watch", "51"}, "--connect"},
		{[]string{"scan", "--peer", refused, "--mode", "bip37", "--watch", "0014" + strings.Repeat("ab", 20)}, "--peer"},
		{[]string{"send", "--connect", refused, tx}, "--connect"},
		{[]string{"peers", "--connect", refused}, "--connect"},
		{[]string{"peers", "--peer", refused}, "--peer"},
		{[]string{"lab", "--connect", refused, "--probes", "0"}, "--connect"},
		{[]string{"privacy", "universe", "--peer", refused, "--out", "-"}, "--peer"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", refused, "--out", "-"}, "--upstream"},
	} {
		args := append(append([]string{}, c.args...), regtest...)
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			want := c.flag + " " + refused + ": connection refused: nothing listens there"
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
				t.Errorf("%q: status %d, stdout %q, stderr %q: want 1 and %q", args, status, stdout, stderr, want)
			}
			stdout, stderr, status = runCLI(t, "", append(args, "--json")...)
			var obj map[string]any
			if status != exitFailure || stdout != "" || json.Unmarshal([]byte(stderr), &obj) != nil || obj["exit_code"] != float64(exitFailure) ||
				!strings.Contains(fmt.Sprint(obj["error"]), want) {
				t.Errorf("%q --json: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
			}
		})
	}
}

// fullWriter fails every write, as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// TestOutputNotWritten: a result that cannot be written to standard
// output (a full disk) is a failure (1) said in the tool's words, in
// every kind of output: text, JSON, help.
func TestOutputNotWritten(t *testing.T) {
	for _, args := range [][]string{
		{"privacy", "model"},
		{"privacy", "model", "--json"},
		{"bloom", "new", "--elements", "1", "--fprate", "0.01", "00"},
		{"version"},
		{"--help"},
	} {
		var stderr bytes.Buffer
		status := run(args, strings.NewReader(""), fullWriter{}, &stderr)
		want := "standard output: no space left on the device"
		if status != exitFailure || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "/dev/stdout") {
			t.Errorf("%q: status %d, stderr %q: want 1 and %q", args, status, stderr.String(), want)
		}
	}
}

// TestNamedOnce: a file an error names after its flag is not named again
// by the error's own words.
func TestNamedOnce(t *testing.T) {
	for _, tc := range []struct{ what, msg, want string }{
		{"--plot a.svg", "a.svg: no space left on device", "--plot a.svg: no space left on device"},
		{"--plot a.svg", "b.svg: no space left on device", "--plot a.svg: b.svg: no space left on device"},
		{"--plot a.svg", "not a.svg: x", "--plot a.svg: not a.svg: x"},
		{"--filter", "--filter: x", "--filter: --filter: x"},
	} {
		if got := named(tc.what, tc.msg); got != tc.want {
			t.Errorf("named(%q, %q) = %q, want %q", tc.what, tc.msg, got, tc.want)
		}
	}
	full := filepath.Join(t.TempDir(), "full.svg")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		return // no full device to write to on this system
	}
	_, stderr, status := runCLI(t, "", "privacy", "model", "--plot", full)
	if want := "spvfilter: --plot " + full + ": no space left on the device\n"; status != exitFailure || stderr != want {
		t.Errorf("a plot on a full disk: status %d, stderr %q, want %q", status, stderr, want)
	}
}

// TestNewcomerFileKinds: a universe or a block file given where a
// capture, a report, the labels or an index is wanted, a file of another
// kind or an empty one given as --index, --blocks or --vectors, and a
// capture given where hex is wanted, are named as what they are, with
// where to give them; a universe with a bad line or no candidate, and a
// block file cut short, are still told as such.
func TestNewcomerFileKinds(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, stderr, status := runCLI(t, "", "privacy", "simulate", "--out", sim, "--wallets", "2", "--blocks", "10", "--fetch-wallets", "1",
		"--noise", "0", "--degenerate", "0", "--txs-per-block", "2", "--addresses", "5"); status != exitOK {
		t.Fatalf("simulate: %s", stderr)
	}
	in := func(name string) string { return filepath.Join(sim, name) }
	files := map[string]string{
		// As privacy universe writes it, and without its opening comment.
		"universe.txt":   "# candidates of regtest blocks 0..5 from 127.0.0.1:1, one per line\nbcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 # height 1\n",
		"bare.txt":       "\nbcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080 # height 1\n",
		"bad-line.txt":   "# candidates of regtest blocks 0..5 from 127.0.0.1:1, one per line\nzz # height 1\n",
		"no-candidates":  "# candidates of regtest blocks 0..5 from 127.0.0.1:1, one per line\n",
		"empty":          "",
		"report.json":    `{"universe": {}, "clients": []}`,
		"one-script.hex": "0014751e76e8199196d454941c45d1b3a323f1433bd6\n",
	}
	files["regtest.blocks"] = string(writeLabBlockFile(t, chaincfg.RegressionNetParams.GenesisBlock))
	files["short.blocks"] = files["regtest.blocks"][:len(files["regtest.blocks"])-10]
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	const (
		asUniverse = ": a universe of candidates (privacy universe, privacy simulate), not what "
		jq         = `jq -r 'select(.command == "filterload").filterload'`
	)
	filter, _, _ := runCLI(t, "", "bloom", "new", "--elements", "1", "--fprate", "0.01", "51")
	fetches := func(index string) []string {
		return []string{"privacy", "fetches", "--capture", in("fetch-capture.jsonl"), "--index", index}
	}
	runRows(t, []contractRow{
		{name: "a universe as the capture", args: []string{"privacy", "analyze", "--capture", at("universe.txt"), "--universe", at("universe.txt")},
			status: exitBadInput, stderr: []string{"--capture " + at("universe.txt") + asUniverse + "--capture takes: give it to privacy analyze --universe"}, notInErr: []string{"not JSON"}},
		{name: "a universe without its opening comment as a fetches capture", args: []string{"privacy", "fetches", "--capture", at("bare.txt"), "--index", in("chain.idx")},
			status: exitBadInput, stderr: []string{"--capture " + at("bare.txt") + asUniverse + "--capture takes"}},
		{name: "a universe as the report", args: []string{"privacy", "evaluate", "--labels", in("labels.json"), "--report", at("universe.txt")},
			status: exitBadInput, stderr: []string{"--report " + at("universe.txt") + asUniverse + "--report takes"}, notInErr: []string{"not JSON"}},
		{name: "a universe as the labels", args: []string{"privacy", "evaluate", "--labels", at("universe.txt"), "--report", at("report.json")},
			status: exitBadInput, stderr: []string{"--labels " + at("universe.txt") + asUniverse + "--labels takes"}},
		{name: "a universe as the index", args: fetches(at("universe.txt")),
			status: exitBadInput, stderr: []string{"--index " + at("universe.txt") + asUniverse + "--index takes"}, notInErr: []string{"SPVFIDX"}},
		{name: "the labels as the index", args: fetches(in("labels.json")),
			status: exitBadInput, stderr: []string{"--index " + in("labels.json") + ": the labels of privacy simulate, not what --index takes: give it to privacy evaluate --labels"}},
		{name: "a capture as the index", args: fetches(in("capture.jsonl")),
			status: exitBadInput, stderr: []string{"--index " + in("capture.jsonl") + ": a capture of privacy capture (JSON lines), not what --index takes"}},
		{name: "an empty index", args: fetches(at("empty")),
			status: exitBadInput, stderr: []string{"--index " + at("empty") + ": empty: want an appearance index (privacy universe --index and privacy simulate write one)"}, notInErr: []string{"SPVFIDX"}},
		{name: "a universe with a bad line is still a universe", args: []string{"privacy", "analyze", "--capture", in("capture.jsonl"), "--universe", at("bad-line.txt")},
			status: exitBadInput, stderr: []string{"--universe " + at("bad-line.txt") + ": the universe holds no candidate"}, notInErr: []string{"not what"}},
		{name: "a universe without candidates is still a universe", args: []string{"privacy", "analyze", "--capture", in("capture.jsonl"), "--universe", at("no-candidates")},
			status: exitBadInput, stderr: []string{"--universe " + at("no-candidates") + ": the universe holds no candidate"}, notInErr: []string{"not what"}},
		{name: "a capture as a Bloom filter", args: []string{"bloom", "inspect", "--filter", "@" + in("capture.jsonl")},
			status: exitBadInput, stderr: []string{"--filter: @" + in("capture.jsonl") + " holds a capture of privacy capture (JSON lines), not hex: give it to privacy analyze --capture or privacy fetches --capture; the hex of its BIP 37 filters is in the field \"filterload\" of its filterload records (" + jq + " prints them, one per line)"}, notInErr: []string{"wrapped", "join them"}},
		{name: "a capture of downloads as a compact filter", args: []string{"gcs", "inspect", "--filter", "@" + in("fetch-capture.jsonl")},
			status: exitBadInput, stderr: []string{"--filter: @" + in("fetch-capture.jsonl") + " holds a capture of privacy capture (JSON lines), not hex"}, notInErr: []string{"wrapped", "filterload"}},
		{name: "a universe as a Bloom filter", args: []string{"bloom", "inspect", "--filter", "@" + at("universe.txt")},
			status: exitBadInput, stderr: []string{"--filter: @" + at("universe.txt") + " holds a universe of candidates (privacy universe, privacy simulate), not hex: give it to privacy analyze --universe"}},
		{name: "a capture as elements", args: []string{"bloom", "match", "--filter", strings.TrimSpace(filter), "@" + in("capture.jsonl")},
			status: exitBadInput, stderr: []string{"element 1: @" + in("capture.jsonl") + " holds a capture of privacy capture (JSON lines), not hex"}, notInErr: []string{"invalid hex", "filterload"}},
		{name: "a capture as a transaction", args: []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "@" + in("capture.jsonl")},
			status: exitBadInput, stderr: []string{"TX_HEX: @" + in("capture.jsonl") + " holds a capture of privacy capture (JSON lines), not hex"}, notInErr: []string{"filterload"}},
		{name: "a capture as lab's blocks", args: []string{"lab", "--blocks", in("capture.jsonl")},
			status: exitBadInput, stderr: []string{"--blocks " + in("capture.jsonl") + ": a capture of privacy capture (JSON lines), not what --blocks takes"}, notInErr: []string{"does not start"}},
		{name: "an empty file as lab's blocks", args: []string{"lab", "--blocks", at("empty")},
			status: exitBadInput, stderr: []string{"--blocks " + at("empty") + ": empty (want a block file that lab --save-blocks writes)"}, notInErr: []string{"does not start"}},
		{name: "a block file as lab's vectors", args: []string{"lab", "--vectors", at("regtest.blocks")},
			status: exitBadInput, stderr: []string{"--vectors " + at("regtest.blocks") + ": a block file of lab --save-blocks, not BIP 158's test vectors: give it to --blocks"}, notInErr: []string{"not JSON"}},
		{name: "the labels as lab's vectors", args: []string{"lab", "--vectors", in("labels.json")},
			status: exitBadInput, stderr: []string{"--vectors " + in("labels.json") + ": the labels of privacy simulate, not what --vectors takes"}, notInErr: []string{"a list is wanted"}},
		{name: "an empty file as lab's vectors", args: []string{"lab", "--vectors", at("empty")},
			status: exitBadInput, stderr: []string{"--vectors " + at("empty") + ": empty (want the JSON file of BIP 158's test vectors"}, notInErr: []string{"not JSON"}},
		{name: "a block file as the capture", args: []string{"privacy", "analyze", "--capture", at("regtest.blocks"), "--universe", at("universe.txt")},
			status: exitBadInput, stderr: []string{"--capture " + at("regtest.blocks") + ": a block file of lab --save-blocks, not what --capture takes: give it to lab --blocks"}, notInErr: []string{"not JSON"}},
		{name: "a block file as the universe", args: []string{"privacy", "analyze", "--capture", in("capture.jsonl"), "--universe", at("regtest.blocks")},
			status: exitBadInput, stderr: []string{"--universe " + at("regtest.blocks") + ": a block file of lab --save-blocks, not what --universe takes"}},
		{name: "a block file as the labels", args: []string{"privacy", "evaluate", "--labels", at("regtest.blocks"), "--report", at("report.json")},
			status: exitBadInput, stderr: []string{"--labels " + at("regtest.blocks") + ": a block file of lab --save-blocks, not what --labels takes"}, notInErr: []string{"not JSON"}},
		{name: "a block file as a Bloom filter", args: []string{"bloom", "inspect", "--filter", "@" + at("regtest.blocks")},
			status: exitBadInput, stderr: []string{"--filter: @" + at("regtest.blocks") + " holds a block file of lab --save-blocks, not hex: give it to lab --blocks"}, notInErr: []string{"wrapped"}},
		{name: "a block file cut short is still told as one", args: []string{"lab", "--blocks", at("short.blocks")},
			status: exitBadInput, stderr: []string{"--blocks " + at("short.blocks") + ": block 1 (height 0) at byte "}, notInErr: []string{"not what"}},
		{name: "a capture appending to a universe", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", at("universe.txt")},
			status: exitBadInput, stderr: []string{"--out " + at("universe.txt") + ": holds a universe of candidates (privacy universe, privacy simulate), not capture records: capture appends to a file of its own records only (give a new file)"}},
		{name: "a capture appending to a block file", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", at("regtest.blocks")},
			status: exitBadInput, stderr: []string{"--out " + at("regtest.blocks") + ": holds a block file of lab --save-blocks, not capture records"}},
		{name: "a file of one script is still hex", args: []string{"bloom", "match", "--filter", strings.TrimSpace(filter), "@" + at("one-script.hex")},
			status: exitOK, stdout: []string{"0014751e76e8199196d454941c45d1b3a323f1433bd6 "}},
	})
}

// TestNewcomerOtherFileAsHex: a file of the privacy commands or lab (the
// labels, a report, an appearance index, a block file) given where hex
// or items one per line are wanted is named as what it is, with the
// command that takes it, instead of "invalid hex character '{'", "has
// 154 lines" or "is longer than 16777216 bytes"; a command's --json
// output still gets the field to take.
func TestNewcomerOtherFileAsHex(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return "@" + path
	}
	labels := write("labels.json", []byte(`{"format": "`+simulate.LabelsFormat+`", "wallets": []}`+"\n"))
	report := write("report.json", []byte("{\n  \"clients\": [\n    {\"session\": \"a\"}\n  ]\n}\n"))
	index := write("chain.idx", []byte("SPVFIDX\x03\x00\x01\x02"))
	blocks := write("chain.blocks", []byte(blockFileOpening+"1\n\x00\x01"))
	big := write("big.json", append([]byte(`{"clients": [`), bytes.Repeat([]byte(" "), maxHexInput)...))
	bloomJSON := write("bloom.json", []byte(`{"filterload": "`+corePayload+`", "warnings": []}`))
	const labelsWords, reportWords = "the labels of privacy simulate", "a report of privacy analyze or fetches"
	const indexWords, blocksWords = "an appearance index of privacy universe --index", "a block file of lab --save-blocks"
	runRows(t, []contractRow{
		{name: "labels as bloom --filter", args: []string{"bloom", "inspect", "--filter", labels},
			status: exitBadInput, stderr: []string{"--filter: " + labels + " holds " + labelsWords + ", not hex: give it to privacy evaluate --labels"}},
		{name: "a report as gcs --filter", args: []string{"gcs", "inspect", "--filter", report},
			status: exitBadInput, stderr: []string{"--filter: " + report + " holds " + reportWords + ", not hex: give it to privacy evaluate --report"}, notInErr: []string{"lines"}},
		{name: "an index as --merkleblock", args: []string{"merkleblock", "verify", "--merkleblock", index},
			status: exitBadInput, stderr: []string{"--merkleblock: " + index + " holds " + indexWords + ", not hex: give it to privacy fetches --index"}},
		{name: "labels as elements", args: []string{"bloom", "match", "--filter", corePayload, labels},
			status: exitBadInput, stderr: []string{"element 1: " + labels + " holds " + labelsWords + ", not items one per line: give it to privacy evaluate --labels"}, notInErr: []string{"invalid hex"}},
		{name: "an index as --watch", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", index},
			status: exitBadInput, stderr: []string{"--watch 1: " + index + " holds " + indexWords + ", not items one per line"}, notInErr: []string{"binary"}},
		{name: "a block file as --txid", args: []string{"merkleblock", "build", "--block", vectorBlockHex(t, block13b8a), "--txid", blocks},
			status: exitBadInput, stderr: []string{"--txid 1: " + blocks + " holds " + blocksWords + ", not items one per line: give it to lab --blocks"}},
		{name: "a report longer than an argument", args: []string{"bloom", "match", "--filter", corePayload, big},
			status: exitBadInput, stderr: []string{"element 1: " + big + " holds " + reportWords + ": give it to privacy evaluate --report"}, notInErr: []string{"longer than"}},
		{name: "a command's --json output", args: []string{"bloom", "inspect", "--filter", bloomJSON},
			status: exitBadInput, stderr: []string{`give the hex of its field "filterload" (jq -r .filterload prints it)`}},
	})
}

// TestHexCutShort: a value copied from an example, cut short with ... or
// … (as the examples of send, bloom match and gcs match write it), is
// named as such, not as a file to give with @; the character shown is
// the one written, not the first byte of its UTF-8 ('â' for '…').
func TestHexCutShort(t *testing.T) {
	filter, _, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", "aa")
	if status != exitOK {
		t.Fatalf("bloom new: status %d", status)
	}
	const cut = "an example's ... or … stands for the rest of the value: give it whole"
	tests := []struct {
		args      []string
		want, not string
	}{
		{[]string{"bloom", "match", "--filter", strings.TrimSpace(filter), "0014..."}, "'.' at offset 4 (" + cut, "@0014"},
		{[]string{"bloom", "match", "--filter", strings.TrimSpace(filter), "0014…"}, "'…' at offset 4 (" + cut, "'â'"},
		{[]string{"bloom", "match", "--filter", strings.TrimSpace(filter), "00é4"}, "'é' at offset 2", "'Ã'"},
		{[]string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "0200000001…"}, "TX_HEX: invalid hex character '…' at offset 10 (" + cut, "'â'"},
	}
	for _, tt := range tests {
		_, stderr, status := runCLI(t, "", tt.args...)
		if status != exitBadInput || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, tt.not) {
			t.Errorf("%q: status %d, stderr %q\nwant %d, %q and not %q", tt.args, status, stderr, exitBadInput, tt.want, tt.not)
		}
	}
}

// TestProgressNodeDownloads: every command that syncs headers and
// downloads blocks from a node shows both on a terminal (here through the
// app's hook), as scan does: a whole chain is hours, and a command that
// says nothing for hours looks hung.
func TestProgressNodeDownloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	miner := peertest.NewKey("cli-progress-miner")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(miner))
	const blocks = 12
	node.Generate(t, blocks)
	dir := t.TempDir()
	watch := miner.Address(node.Params).EncodeAddress()
	tests := []struct {
		name string
		args []string
		bars map[string]int // the total each bar was drawn to
	}{
		{"scan", []string{"scan", "--connect", node.P2PAddr, "--network", "regtest", "--watch", watch},
			map[string]int{"syncing headers": blocks, "scanning blocks": blocks + 1}},
		{"privacy universe", []string{"privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", filepath.Join(dir, "u.txt")},
			map[string]int{"syncing headers": blocks, "downloading blocks": blocks + 1}},
		{"peers", []string{"peers", "--connect", node.P2PAddr, "--network", "regtest", "--datadir", dir},
			map[string]int{"syncing headers": blocks}},
		{"lab", []string{"lab", "--connect", node.P2PAddr, "--network", "regtest", "--probes", "0", "--timing", "0"},
			map[string]int{"syncing headers": blocks, "downloading blocks": blocks + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, bars := barApp()
			if status := a.execute(tt.args); status != exitOK {
				t.Fatalf("status %d", status)
			}
			for what, want := range tt.bars {
				b := bars[what]
				if b == nil || b.total != want || b.done != want || !b.finished {
					t.Errorf("%s: bar %+v, want one of %d done and finished", what, b, want)
				}
			}
		})
	}
}

// TestProgressMonteCarlo: a Monte Carlo check of the model, minutes at
// many trials, spins while it runs (on a terminal; here through the
// app's hook), and a model without it draws no bar.
func TestProgressMonteCarlo(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"privacy", "model", "--addresses", "5", "--universe-size", "2000", "--monte-carlo", "2"}, true},
		{[]string{"privacy", "model", "--addresses", "5", "--universe-size", "2000"}, false},
	}
	const what = "Monte Carlo trials"
	for _, tt := range tests {
		a, bars := barApp()
		if status := a.execute(tt.args); status != exitOK {
			t.Fatalf("%q: status %d", tt.args, status)
		}
		b := bars[what]
		if got := b != nil; got != tt.want {
			t.Errorf("%q: bar %q drawn %v, want %v", tt.args, what, got, tt.want)
		} else if b != nil && (b.total != -1 || !b.finished) {
			t.Errorf("%q: bar %+v, want a spinner (total -1) finished", tt.args, b)
		}
	}
}

// TestNewcomerJSONShapes: a --labels or --report file holding JSON of
// another shape (null, an empty object) says what
// it holds and what is wanted, as an array or a string does, not the
// decoder's comparison of empty fields.
func TestNewcomerJSONShapes(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	runOK(t, smallSimulation("7", sim)...)
	labels := filepath.Join(sim, "labels.json")
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte(runOK(t, "privacy", "analyze", "--capture", filepath.Join(sim, "capture.jsonl"), "--universe", filepath.Join(sim, "universe.txt"), "--json")), 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	null, empty := file("null.json", "null\n"), file("empty.json", "{}\n")
	const wantReport = "want the JSON of privacy analyze --capture or privacy fetches (with --json)"
	const wantLabels = "want the labels.json that privacy simulate writes"
	runRows(t, []contractRow{
		{name: "a report of null", args: []string{"privacy", "evaluate", "--labels", labels, "--report", null},
			status: exitBadInput, stderr: []string{"--report " + null + ": not a JSON object; " + wantReport}},
		{name: "labels of null", args: []string{"privacy", "evaluate", "--labels", null, "--report", report},
			status: exitBadInput, stderr: []string{"--labels " + null + ": it holds JSON null where an object is wanted; " + wantLabels}, notInErr: []string{`format ""`}},
		{name: "labels of an empty object", args: []string{"privacy", "evaluate", "--labels", empty, "--report", report},
			status: exitBadInput, stderr: []string{"--labels " + empty + ": it holds an empty JSON object; " + wantLabels}, notInErr: []string{`format ""`}},
	})
}

// TestNewcomerHashLengths: a txid or hash of the wrong length says the
// length wanted in the hex digits a user types, whichever flag takes it.
func TestNewcomerHashLengths(t *testing.T) {
	const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
	const want = "32 (64 hex digits, as RPC shows it)"
	var block bytes.Buffer
	if err := chaincfg.RegressionNetParams.GenesisBlock.Serialize(&block); err != nil {
		t.Fatal(err)
	}
	runRows(t, []contractRow{
		{name: "merkleblock --txid", args: []string{"merkleblock", "build", "--block", hex.EncodeToString(block.Bytes()), "--txid", "00"},
			status: exitBadInput, stderr: []string{"--txid 1: 1 byte, a txid has " + want}},
		{name: "gcs --block-hash", args: []string{"gcs", "match", "--filter", "00", "--block-hash", "00", "aa"},
			status: exitBadInput, stderr: []string{"--block-hash: 1 byte, a hash has " + want}},
		{name: "gcs --prev-header", args: []string{"gcs", "header", "--filter", "00", "--prev-header", zeros[:62]},
			status: exitBadInput, stderr: []string{"--prev-header: 31 bytes, a hash has " + want}},
	})
}

// TestNewcomerScriptAsElement: a whole standard output script given to
// bloom new, add or match as an element is what a wallet developer
// naturally inserts, and a node does not test it against an output (it
// tests the data pushes of the script): the filter would match no
// payment to it. Each command
// warns and names the data to insert (on standard error, or with --json
// in the result alone); the data itself, or a public key, carries no
// warning.
func TestNewcomerScriptAsElement(t *testing.T) {
	const hash = "751e76e8199196d454941c45d1b3a323f1433bd6"
	p2wpkh, p2pkh := "0014"+hash, "76a914"+hash+"88ac"
	filter := strings.TrimSpace(runOK(t, "bloom", "new", "--elements", "3", "--fprate", "0.001", hash))
	warning := func(n int, kind, script string) string {
		return fmt.Sprintf("element %d, %s, is a whole %s output script: a node tests the data pushes of an output script, not the whole script, so it matches no payment to it; insert the data it carries, %s", n, script, kind, hash)
	}
	tests := []struct {
		args []string
		want []string // warnings, in order
	}{
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "0.001", p2wpkh}, []string{warning(1, "P2WPKH", p2wpkh)}},
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "0.001", hash, p2pkh}, []string{warning(2, "P2PKH", p2pkh)}},
		{[]string{"bloom", "add", "--filter", filter, p2pkh}, []string{warning(1, "P2PKH", p2pkh)}},
		{[]string{"bloom", "match", "--filter", filter, hash, p2wpkh}, []string{warning(2, "P2WPKH", p2wpkh)}},
		{[]string{"bloom", "new", "--elements", "3", "--fprate", "0.001", hash, "02" + strings.Repeat("11", 32)}, nil},
	}
	for _, tt := range tests {
		stdout, stderr, status := runCLI(t, "", append(tt.args, "--json")...)
		if status != exitOK {
			t.Fatalf("%q: status %d: %s", tt.args, status, stderr)
		}
		var out struct{ Warnings []string }
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if fmt.Sprint(out.Warnings) != fmt.Sprint(orEmpty(tt.want)) {
			t.Errorf("%q: warnings %q, want %q", tt.args, out.Warnings, tt.want)
		}
		if stderr != "" {
			t.Errorf("%q --json: standard error %q, want nothing: the warnings are in the JSON", tt.args, stderr)
		}
		_, stderr, _ = runCLI(t, "", tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(stderr, "spvfilter: warning: "+w) {
				t.Errorf("%q: standard error %q lacks %q", tt.args, stderr, w)
			}
		}
	}
}

// TestNewcomerJSONPlainText: JSON output keeps <, > and & as written
// (an error's "0 < X < 1", a script's ">>"), not as the \u003c escapes
// meant for HTML pages, which a reader of the output cannot read.
func TestNewcomerJSONPlainText(t *testing.T) {
	tests := []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"privacy", "model", "advise", "--json"}, "", "(0 < X < 1)"},
		{[]string{"completion", "bash", "--json"}, ">", ""},
	}
	for _, tt := range tests {
		stdout, stderr, _ := runCLI(t, "", tt.args...)
		for _, out := range []string{stdout, stderr} {
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if strings.Contains(out, esc) {
					t.Errorf("%q: output holds %s: %.300q", tt.args, esc, out)
				}
			}
		}
		if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%q: standard output %.200q and error %.200q, want %q and %q in them", tt.args, stdout, stderr, tt.stdout, tt.stderr)
		}
	}
}

// TestMistypedCommandBeforeFlag: a command name mistyped before its flags
// is named as an unknown command, with the command meant; before, the
// first flag was said to be no such flag ("--network: no such flag; see
// spvfilter --help"), the flag of the command meant. A flag a command
// lacks is still said so.
func TestMistypedCommandBeforeFlag(t *testing.T) {
	runRows(t, []contractRow{
		{name: "a command", args: []string{"scna", "--network", "regtest"}, status: exitBadInput,
			stderr: []string{`spvfilter: unknown command "scna" for "spvfilter" (did you mean scan or send?); see spvfilter --help`}, notInErr: []string{"no such flag"}},
		{name: "a subcommand", args: []string{"privacy", "anlyze", "--capture", "x"}, status: exitBadInput,
			stderr: []string{`unknown command "anlyze" for "spvfilter privacy" (did you mean analyze?); see spvfilter privacy --help`}, notInErr: []string{"no such flag"}},
		{name: "a word of no command", args: []string{"bloom", "xyzzy", "--elements", "3"}, status: exitBadInput,
			stderr: []string{`unknown command "xyzzy" for "spvfilter bloom"; see spvfilter bloom --help`}, notInErr: []string{"no such flag"}},
		{name: "with --json first", args: []string{"--json", "scna", "--network", "regtest"}, status: exitBadInput,
			stderr: []string{`"error":"unknown command \"scna\" for \"spvfilter\" (did you mean scan or send?)`}},
		{name: "a flag of no command", args: []string{"privacy", "--nosuch"}, status: exitBadInput,
			stderr: []string{"spvfilter: --nosuch: no such flag; see spvfilter privacy --help"}},
		{name: "a flag the command lacks", args: []string{"scan", "--nosuch"}, status: exitBadInput,
			stderr: []string{"spvfilter: --nosuch: no such flag; see spvfilter scan --help"}},
	})
}
