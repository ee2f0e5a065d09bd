package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
)

// maxHexInput bounds what one argument may read from a file or standard
// input: a block is at most 4 MB of weight, so its hex is under 8 MiB.
const maxHexInput = 16 << 20

// inputHelp is the part of the root help that describes how arguments
// are read.
const inputHelp = `Arguments: a value is given literally, as @FILE (read from FILE) or as -
(read from standard input, for one argument only). Where several items are
accepted (elements, txids, scripts, watch items), a file holds one item per
line; the file of a single-value argument holds one line. Blank lines and
text after # are skipped in both; CRLF line ends and a UTF-8 byte order
mark are accepted, UTF-16 text is not.`

// argItem is one item of an argument that takes several, with where it came
// from for errors: "element 2" or "element 2 (@keys.txt line 7)".
type argItem struct {
	text  string
	where string
}

// inputLine is a line of an input file that holds something, numbered
// from 1.
type inputLine struct {
	number int
	text   string
}

// contentLines splits text into its lines, dropping CRs before line
// ends, comments from "#" and blank lines.
func contentLines(text string) []inputLine {
	var out []inputLine
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, inputLine{i + 1, line})
		}
	}
	return out
}

// readSource returns the contents of the file or standard input an
// argument names, and the name to show in errors; ok is false for a
// literal argument.
func (a *app) readSource(what, arg string) (text, name string, ok bool, err error) {
	var r io.Reader
	switch {
	case arg == "-":
		if err := a.claimStdin(what); err != nil {
			return "", "", false, err
		}
		r, name = a.stdin, "standard input"
	case arg == "@":
		return "", "", false, badInput("%s: @ alone names no file: give @FILE, or the value itself", what)
	case strings.HasPrefix(arg, "@"):
		f, err := openFile(what, arg[1:], arg)
		if err != nil {
			return "", "", false, err
		}
		defer f.Close()
		r, name = f, arg
	default:
		return "", "", false, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxHexInput+1))
	if err != nil {
		if arg == "-" {
			return "", "", false, failureWords(what+": reading standard input", err)
		}
		return "", "", false, badInputWords(what+": reading "+name, err)
	}
	if len(b) > maxHexInput {
		if k := kindOf(b); k != kindUnknown {
			return "", "", false, badInput("%s: %s holds %s: %s", what, name, kindWords[k].what, kindWords[k].give)
		}
		if binaryHead(b[:4096]) {
			return "", "", false, badInput("%s: %s holds binary data, not hex, and is longer than the %d bytes (16 MiB) an argument reads: give one value as hex (a block's hex, the largest, is under 8 MiB: getblock HASH 0 prints it)", what, name, maxHexInput)
		}
		return "", "", false, badInput("%s: %s is longer than the %d bytes (16 MiB) an argument reads: give one value as hex, or items one per line (a block's hex, the largest value, is under 8 MiB)", what, name, maxHexInput)
	}
	if utf16Text(b) {
		return "", "", false, badInput("%s: %s is UTF-16 text (as Windows PowerShell writes with >): save it as UTF-8 or ASCII, such as with Out-File -Encoding ascii", what, name)
	}
	// A UTF-8 byte order mark, as Windows editors write, begins no item.
	return strings.TrimPrefix(string(b), "\ufeff"), name, true, nil
}

// utf16Text reports whether b is UTF-16 text: a UTF-16 byte order mark,
// or a NUL byte beside every character of ASCII text.
func utf16Text(b []byte) bool {
	if bytes.HasPrefix(b, []byte{0xff, 0xfe}) || bytes.HasPrefix(b, []byte{0xfe, 0xff}) {
		return true
	}
	if len(b) < 2 || len(b)%2 != 0 {
		return false
	}
	for _, nul := range []int{0, 1} { // big- or little-endian
		all := true
		for i := 0; i < len(b) && all; i += 2 {
			all = b[i+nul] == 0 && b[i+1-nul] != 0 && b[i+1-nul] < 0x80
		}
		if all {
			return true
		}
	}
	return false
}

// openInputFile opens a file an argument names; a missing or unreadable
// file and a directory are bad input. A flag that names a file takes it
// as @FILE too, as the flags that take a value or a file do (a file whose
// name begins with @ is still found).
func openInputFile(what, path string) (*os.File, error) {
	return openFile(what, path, path)
}

// openFile is openInputFile naming the file as shown (@FILE, for an
// argument given so).
func openFile(what, path, shown string) (*os.File, error) {
	if name, ok := strings.CutPrefix(path, "@"); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			path = name
		}
	}
	f, err := os.Open(path)
	var pe *os.PathError
	switch {
	case err == nil:
	case path == "-" && errors.Is(err, fs.ErrNotExist):
		// Not a file named "-": standard input, which this flag does
		// not read.
		return nil, usageError{&restated{fmt.Sprintf("%s -: %s does not read standard input: give a file", what, what), err}}
	case errors.As(err, &pe):
		problem := fileProblem(pe.Err) + tildeHint(path, err)
		if errors.Is(err, fs.ErrNotExist) {
			problem += missingFileAdvice(what, shown)
		}
		if strings.HasPrefix(what, "--") && !strings.Contains(what, " ") {
			// A flag and its file: "--labels FILE: no such file".
			return nil, usageError{&restated{fmt.Sprintf("%s %s: %s", what, shown, problem), err}}
		}
		// An argument and its file: "element 1: @FILE: no such file".
		return nil, usageError{&restated{fmt.Sprintf("%s: %s: %s", what, shown, problem), err}}
	default:
		return nil, badInputWords(what, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		if strings.HasPrefix(what, "--") && !strings.Contains(what, " ") {
			return nil, badInput("%s %s: a directory, not a file", what, shown)
		}
		return nil, badInput("%s: %s is a directory, not a file", what, shown)
	}
	return f, nil
}

// readArgText returns the literal text of a single-value argument, or the
// one line of the file or standard input it names.
func (a *app) readArgText(what, arg string) (string, error) {
	text, name, ok, err := a.readSource(what, arg)
	if err != nil {
		return "", err
	}
	if !ok {
		return arg, nil
	}
	if hint := fileKindHint([]byte(text), strings.HasPrefix(what, "--filter")); hint != "" {
		return "", badInput("%s: %s holds %s", what, name, hint)
	}
	if hint := jsonHint(what, text); hint != "" {
		return "", badInput("%s: %s holds %s", what, name, hint)
	}
	if isBinary(strings.Join(strings.Fields(text), "")) {
		// Raw bytes (a block saved as it goes over the wire, say): their
		// newline bytes make lines, and joining them is no cure.
		return "", badInput("%s: %s holds binary data, not hex: %s", what, name, hexAdvice(name))
	}
	lines := contentLines(text)
	switch len(lines) {
	case 0:
		return "", badInput("%s: %s is empty", what, name)
	case 1:
		return lines[0].text, nil
	}
	return "", badInput("%s: %s has %d lines (first at %d, second at %d) but %s takes one value (hex wrapped over lines: join them first)",
		what, name, len(lines), lines[0].number, lines[1].number, what)
}

// jsonNotHex says of JSON given where hex is wanted what to give.
const jsonNotHex = "JSON, not hex (a command's --json output?): give hex, as the command prints it without --json"

// jsonHint says, of the text of the single-value argument what that is
// a JSON object (a command's --json output), which of its fields hold
// hex and how to take one, the field named as the flag first; "" for
// text that is no JSON object.
func jsonHint(what, text string) string {
	var obj map[string]any
	switch t := strings.TrimSpace(text); {
	case !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "["):
		return ""
	case json.Unmarshal([]byte(text), &obj) != nil:
		// A list, or JSON cut short: no field to point at.
		return jsonNotHex
	}
	var fields []string
	for k, v := range obj {
		if s, ok := v.(string); ok && len(s) > 0 && len(s)%2 == 0 {
			if _, err := hex.DecodeString(s); err == nil {
				fields = append(fields, k)
			}
		}
	}
	if len(fields) == 0 {
		return jsonNotHex
	}
	// The field named as the flag, or one whose name holds it, first.
	name := strings.TrimPrefix(what, "--")
	rank := func(f string) int {
		switch {
		case f == name:
			return 0
		case strings.Contains(f, name):
			return 1
		}
		return 2
	}
	slices.SortFunc(fields, func(a, b string) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		return strings.Compare(a, b)
	})
	return fmt.Sprintf("JSON, not hex (a command's --json output?): give the hex of its field %q (jq -r .%s prints it), or the command's output without --json",
		fields[0], fields[0])
}

// fileKindHint says, of the text of an argument that wants hex, that it
// is a file of the privacy commands or lab (a capture, a universe, the
// labels, a report, an index, a block file) and where to give it; for a
// capture of filterloads given where a filter is wanted (filter), how to
// take a filter's hex. "" for text of no such kind.
func fileKindHint(b []byte, filter bool) string {
	k := kindOf(b)
	if k == kindUnknown {
		return ""
	}
	w := kindWords[k]
	hint := fmt.Sprintf("%s, not hex: %s", w.what, w.give)
	if filter && k == kindCapture && bytes.Contains(b, []byte(`"filterload":"`)) {
		hint += `; the hex of its BIP 37 filters is in the field "filterload" of its filterload records (jq -r 'select(.command == "filterload").filterload' prints them, one per line)`
	}
	return hint
}

// readHexArg decodes a single-value hex argument: literal, @FILE or -.
// White space inside and a leading 0x are ignored. what names the argument
// in errors.
func (a *app) readHexArg(what, arg string) ([]byte, error) {
	text, err := a.readArgText(what, arg)
	if err != nil {
		return nil, err
	}
	// An error in hex read from a file names the file too.
	switch {
	case arg == "-":
		what += " (standard input)"
	case strings.HasPrefix(arg, "@"):
		what += " " + arg
	}
	return decodeHex(what, text)
}

// readItems returns the items of an argument that takes several: each
// literal argument is one item, each @FILE or - argument one item per
// line. A file without items is bad input.
func (a *app) readItems(what string, args []string) ([]argItem, error) {
	var items []argItem
	for i, arg := range args {
		argWhat := fmt.Sprintf("%s %d", what, i+1)
		text, name, ok, err := a.readSource(argWhat, arg)
		if err != nil {
			return nil, err
		}
		if !ok {
			items = append(items, argItem{text: arg, where: argWhat})
			continue
		}
		switch k := kindOf([]byte(text)); k {
		case kindCapture:
			return nil, badInput("%s: %s holds %s", argWhat, name, fileKindHint([]byte(text), false))
		case kindLabels, kindReport, kindIndex, kindBlocks:
			// A universe, one candidate a line, may be a list of items.
			return nil, badInput("%s: %s holds %s, not items one per line: %s", argWhat, name, kindWords[k].what, kindWords[k].give)
		}
		lines := contentLines(text)
		if len(lines) == 0 {
			return nil, badInput("%s: %s holds no items", argWhat, name)
		}
		for _, l := range lines {
			items = append(items, argItem{text: l.text, where: fmt.Sprintf("%s (%s line %d)", argWhat, name, l.number)})
		}
	}
	return items, nil
}

// readHexItems decodes every item of an argument that takes several hex
// items.
func (a *app) readHexItems(what string, args []string) ([][]byte, error) {
	items, err := a.readItems(what, args)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(items))
	for i, it := range items {
		if out[i], err = decodeHex(it.where, it.text); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readHexArgs decodes several single-value arguments (a repeated flag
// whose every value is one thing, such as one filter).
func (a *app) readHexArgs(what string, args []string) ([][]byte, error) {
	out := make([][]byte, 0, len(args))
	for i, arg := range args {
		b, err := a.readHexArg(fmt.Sprintf("%s %d", what, i+1), arg)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// hexAdvice says how to turn the bytes of file into what a hex argument
// takes: their hex digits on one line (xxd -p alone wraps them).
func hexAdvice(file string) string {
	file = strings.TrimPrefix(file, "@")
	if file == "" || file == "-" || strings.ContainsAny(file, " '\"$`") {
		file = "FILE"
	}
	return fmt.Sprintf(`give the bytes as hex digits on one line (xxd -p %s | tr -d '\n' prints them so)`, file)
}

// errOddHex is the cause of hex text with an odd number of digits.
var errOddHex = errors.New("odd number of hex digits")

// decodeHex decodes hex text, ignoring white space and a leading 0x, and
// names the argument and the offending position in errors.
func decodeHex(what, text string) ([]byte, error) {
	s := strings.Join(strings.Fields(text), "")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, badInput("%s: empty hex", what)
	}
	if isBinary(s) {
		return nil, badInput("%s: binary data, not hex: %s", what, hexAdvice("FILE"))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		var e hex.InvalidByteError
		switch {
		case errors.Is(err, hex.ErrLength):
			return nil, badInput("%s: %w (%d)", what, errOddHex, len(s))
		case errors.As(err, &e):
			if hint := addressHint(s); hint != "" {
				return nil, badInput("%s: %s", what, hint)
			}
			at, r := firstNonHex(s)
			if at == 0 && (r == '{' || r == '[') {
				return nil, badInput("%s: %s", what, jsonNotHex)
			}
			hint := hexHint(what, s)
			if hint == "" {
				hint = " (want hex digits, 0-9 and a-f)"
			}
			return nil, badInput("%s: invalid hex character %q at offset %d%s", what, r, at, hint)
		}
		return nil, badInputWords(what, err)
	}
	return b, nil
}

// addressHint says, of a value given where hex is wanted that is an
// address, what it is and the hex it stands for: its output script (what
// a BIP 158 filter holds) and the hash or key it carries (what a BIP 37
// filter matches in its script); "" for a value that is no address.
func addressHint(value string) string {
	for _, n := range knownNetworks {
		addr, err := btcutil.DecodeAddress(value, n.params)
		if err != nil || !addr.IsForNet(n.params) {
			continue
		}
		script, err := txscript.PayToAddrScript(addr)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%s is %s address, not hex: its output script is %x, the data it carries %x",
			value, networksPhrase(addressNetworks(value)), script, addr.ScriptAddress())
	}
	return ""
}

// tildeHint says, of a file path that begins with a ~ and is not found,
// that no shell expanded the ~: after @, the tool's own syntax, none does.
func tildeHint(path string, err error) string {
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(path, "~/") {
		return ""
	}
	return " (the shell expands a ~ only at the start of a word, not after @ or =: write $HOME in place of ~)"
}

// firstNonHex returns the first character of s that is no hex digit, and
// its byte offset: the whole character, where hex.InvalidByteError holds
// only its first byte (the first byte of "…" reads as 'â').
func firstNonHex(s string) (int, rune) {
	for i, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return i, r
		}
	}
	return len(s), utf8.RuneError
}

// hexHint says what a value that is no hex may be instead: a file (see
// fileHint), or an example's value cut short with ... or …, which stand
// for the rest of it.
func hexHint(what, value string) string {
	if st, err := os.Stat(value); err == nil && !st.IsDir() || !strings.Contains(value, "...") && !strings.Contains(value, "…") {
		return fileHint(what, value)
	}
	return " (an example's ... or … stands for the rest of the value: give it whole)"
}

// fileHint says, of a value given as text that is no hex, how to read a
// file of that name, when it looks like one (it exists, or holds a path's
// dot or slash): the user may have left out the @. A line of a file
// (what names its line) gets no hint.
func fileHint(what, value string) string {
	if strings.Contains(what, " line ") {
		return ""
	}
	if st, err := os.Stat(value); err == nil && !st.IsDir() {
		return fmt.Sprintf(" (a file %s exists: give @%s to read it)", value, value)
	}
	if strings.ContainsAny(value, "./\\") {
		return fmt.Sprintf(" (want hex digits; a file is read with @FILE, such as @%s)", value)
	}
	return ""
}

// isBinary reports whether s holds bytes no text holds: a control
// character, or bytes that are not UTF-8.
func isBinary(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// claimStdin marks standard input as read by the argument what; it is bad
// input for a second argument to claim it, since it can feed only one.
func (a *app) claimStdin(what string) error {
	if a.stdinUsed {
		return badInput("%s: standard input (-) can feed only one argument, and another one read it", what)
	}
	a.stdinUsed = true
	return nil
}

// parsePeerAddr checks a node address HOST:PORT (a host name, an IPv4
// address or a bracketed IPv6 address, and a port from 1 to 65535),
// loopback or not; anything else is bad input naming the flag what.
func parsePeerAddr(what, addr string) (string, error) {
	if err := checkHostPort(addr, false); err != nil {
		return "", badInput("%s %q: %w", what, addr, err)
	}
	return addr, nil
}

// parseListenAddr checks an address to listen on: as parsePeerAddr, but
// the host may be empty (every interface) and the port 0 (any free one).
func parseListenAddr(what, addr string) (string, error) {
	if err := checkHostPort(addr, true); err != nil {
		return "", badInput("%s %q: %w", what, addr, err)
	}
	return addr, nil
}

// portAdvice says, of an address host given without a port, the
// HOST:PORT wanted: for a node, with its network's port, each network's
// listed; to listen on, with port 0 for any free one.
func portAdvice(host string, listen bool) string {
	switch {
	case strings.TrimSpace(host) == "":
		host = "127.0.0.1"
	case strings.Contains(host, ":") && !strings.HasPrefix(host, "["):
		host = "[" + host + "]"
	}
	if listen {
		if host == "127.0.0.1" {
			return listenForm
		}
		return fmt.Sprintf("want HOST:PORT to listen on, such as %s:0 (port 0: any free one)", host)
	}
	ports := make([]string, len(knownNetworks))
	for i, n := range knownNetworks {
		ports[i] = n.params.DefaultPort + " " + n.name
	}
	return fmt.Sprintf("want HOST:PORT, such as %s:%s, with the node's port (by default %s)",
		host, knownNetworks[0].params.DefaultPort, strings.Join(ports, ", "))
}

// listenForm says what an address to listen on is.
const listenForm = "want HOST:PORT to listen on, such as 127.0.0.1:0 (this machine only; port 0: any free one) or :8333 (every interface)"

// addrWords says in the tool's words what net.SplitHostPort refused in
// an address (its net.AddrError), with an IPv6 address in brackets as
// example: example.
var addrWords = map[string]func(example string) string{
	"missing port in address":    func(string) string { return "no port" },
	"too many colons in address": func(string) string { return "too many colons: an IPv6 address goes in brackets" },
	"missing ']' in address":     func(string) string { return "an IPv6 address opened with [ has no ]" },
	"unexpected '[' in address": func(ex string) string {
		return "a [ out of place: only an IPv6 address goes in brackets, before the port, as " + ex
	},
	"unexpected ']' in address": func(ex string) string {
		return "a ] out of place: only an IPv6 address goes in brackets, before the port, as " + ex
	},
}

// checkHostPort says what is wrong with a HOST:PORT address: a node's
// (the port from 1), or one to listen on (listen: the host may be empty,
// every interface, and the port 0, any free one). The error wraps what
// the net or strconv package refused.
func checkHostPort(addr string, listen bool) error {
	form, example, low := "want HOST:PORT, such as 127.0.0.1:8333 or [::1]:8333", "[::1]:8333", 1
	if listen {
		form, example, low = listenForm, "[::1]:0", 0
	}
	bad := func(why string, cause error) error {
		msg := why + "; " + form
		if cause == nil {
			return errors.New(msg)
		}
		return &restated{msg, cause}
	}
	if scheme, _, ok := strings.Cut(addr, "://"); ok {
		return bad(fmt.Sprintf("a URL (%s://): give the address alone", scheme), nil)
	}
	if strings.ContainsAny(strings.TrimSpace(addr), ", \t") {
		if listen {
			return bad("several addresses in one: give one", nil)
		}
		return bad("several addresses in one: give one per flag, and the flag again for each other node", nil)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if !errors.As(err, &ae) {
			return bad(words(err), err)
		}
		if ae.Err == "missing port in address" {
			return &restated{"no port; " + portAdvice(addr, listen), err}
		}
		if w, ok := addrWords[ae.Err]; ok {
			return bad(w(example), err)
		}
		return bad(ae.Err, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	switch {
	case err != nil:
		return bad(fmt.Sprintf("port %q is not a number from %d to 65535", port, low), err)
	case n == 0 && !listen:
		return bad("port 0", nil)
	case host == "" && !listen:
		return bad("no host", nil)
	case host != "" && net.ParseIP(host) == nil && !validHostName(host):
		return bad(fmt.Sprintf("%q is neither an IP address nor a host name", host), nil)
	}
	return nil
}

// validHostName reports whether s is a syntactically valid DNS host name
// (RFC 1123 labels of letters, digits and hyphens).
func validHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
