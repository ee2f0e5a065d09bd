// Package banlist keeps the hosts a light client refuses to connect to
// (Ban), with why and until when, in memory or in a network's directory
// of a data directory (bans.json), checked ban by ban when it is read.
// Package pool keeps one for its members.
package banlist

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// bansFile is the ban list's file in a network's directory of a data
// directory.
const bansFile = "bans.json"

// DefaultDuration is how long a ban lasts when it is given no
// duration: a day, as Bitcoin Core's -bantime default.
const DefaultDuration = 24 * time.Hour

// maxBans caps the bans a list keeps: a ban drops the oldest beyond it.
const maxBans = 10000

// maxBanReason caps a ban's reason, in bytes; longer ones are cut.
const maxBanReason = 256

// bansVersion is the version of the ban list's format written; version
// 1 (without Proof) is read too, its bans taken as resting on no proof.
const bansVersion = 2

// maxBansFileSize bounds what reading the ban list may take: maxBans bans
// of the longest host and reason, every byte of the reason escaped.
const maxBansFileSize = maxBans * (maxHostLen + 6*maxBanReason + 128)

// maxHostLen is the longest host name (RFC 1035: 253 characters).
const maxHostLen = 253

// ErrBadHost is returned by a ban or an unban of a host that is neither
// an IP address nor a host name.
var ErrBadHost = errors.New("banlist: not an IP address or host name")

// ErrClosed: a ban list used after Close.
var ErrClosed = errors.New("banlist: closed")

// Ban is a host a client refuses to connect to until a time, and why.
type Ban struct {
	// Host is an IP address in its canonical form (IPv4-mapped IPv6
	// addresses as IPv4, IPv6 in RFC 5952 form) or a host name in lower
	// case, without a port.
	Host   string    `json:"host"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
	// Proof is set when the ban rests on evidence the client checked
	// itself (a block that proves a filter false, invalid headers, a
	// flood, a protocol violation), not on a vote or a hand.
	Proof bool `json:"proof,omitempty"`
}

// bansJSON is the ban list's file.
type bansJSON struct {
	Version int   `json:"version"`
	Bans    []Ban `json:"bans"`
}

// bansRead is the ban list's file as read: each ban decoded on its own.
type bansRead struct {
	Version int               `json:"version"`
	Bans    []json.RawMessage `json:"bans"`
}

// normalizeHost returns the host a ban is kept under for host: an IP
// address or host name, with or without a port (which is dropped, but for
// a loopback address: nodes on this machine are told apart by their
// ports), an IPv6 address with or without brackets. IPv4-mapped IPv6 addresses
// become IPv4 addresses, IPv6 addresses take their RFC 5952 form, host
// names lose a final dot and are put in lower case.
func normalizeHost(host string) (string, error) {
	h, port := host, ""
	if hp, p, err := net.SplitHostPort(h); err == nil {
		h, port = hp, p
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		if a.IsLoopback() && port != "" {
			// Nodes on this machine are told apart by their ports.
			return net.JoinHostPort(a.String(), port), nil
		}
		return a.String(), nil
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if !isHostName(h) {
		return "", fmt.Errorf("%w: %q", ErrBadHost, host)
	}
	return h, nil
}

// isHostName reports whether h is a host name: dot-separated labels of
// 1 to 63 letters, digits, hyphens or underscores, 253 characters at
// most.
func isHostName(h string) bool {
	if h == "" || len(h) > maxHostLen {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// List is the hosts banned, by host, kept in memory and, in a
// directory, in bans.json: written whole through a temporary file renamed
// into place at every change, and checked when it is opened (a file that
// fails is set aside, never read in part nor taken silently for an empty
// list; in a file that decodes, each ban is checked on its own, one that
// fails dropped with a note saying why and the others kept). Its methods
// are safe for concurrent use.
type List struct {
	mu     sync.Mutex
	path   string // "" in memory
	sync   bool
	now    func() time.Time
	max    int // maxBans; lower in tests
	bans   map[string]Ban
	closed bool
}

// Open opens the ban list kept in dir (a network's directory of a
// data directory, which its owner locks: package store does), or one in
// memory for dir "". The notes say what was wrong with the file and what
// became of it; opening never fails, as no ban is better than a refusal
// to start.
func Open(dir string) (*List, []string) {
	return openList(dir, true, time.Now)
}

// openList is Open with a clock, and writes synced or not.
func openList(dir string, sync bool, now func() time.Time) (*List, []string) {
	if dir == "" {
		return &List{now: now, max: maxBans, bans: map[string]Ban{}}, nil
	}
	l, note := loadBans(filepath.Join(dir, bansFile), sync, now)
	if note != "" {
		return l, []string{note}
	}
	return l, nil
}

// loadBans reads the ban list at path. A file that cannot be read or
// decoded is set aside, and no ban is loaded; a ban that fails its checks
// is dropped and the others kept (the file as it was is set aside, and
// the kept bans written). The second result says what happened.
func loadBans(path string, sync bool, now func() time.Time) (*List, string) {
	l := &List{path: path, sync: sync, now: now, max: maxBans, bans: map[string]Ban{}}
	bans, dropped, err := readBans(path)
	if err == nil {
		for _, b := range bans {
			l.bans[b.Host] = b
		}
		l.prune()
		if len(dropped) == 0 {
			return l, ""
		}
		note := droppedNote(dropped, len(bans))
		aside, serr := diskfile.SetAside(path, now())
		if serr == nil {
			note += "; the file as it was is set aside as " + aside
			serr = l.save()
		}
		if serr != nil {
			note += fmt.Sprintf("; the file could not be rewritten (%v)", serr)
		}
		return l, note
	}
	note := fmt.Sprintf("%s: %v", bansFile, err)
	if aside, serr := diskfile.SetAside(path, now()); serr != nil {
		note += fmt.Sprintf("; it could not be set aside (%v), and will be replaced at the next ban", serr)
	} else {
		note += ": set aside as " + aside
	}
	return l, note + "; no bans were loaded"
}

// droppedNote says which bans of a file were dropped, and how many kept.
func droppedNote(dropped []string, kept int) string {
	bans := "bans"
	if len(dropped) == 1 {
		bans = "ban"
	}
	return fmt.Sprintf("%s: %d %s dropped (%s), %d kept", bansFile, len(dropped), bans, strings.Join(dropped[:min(len(dropped), 3)], "; "), kept)
}

// Read returns the bans in force kept in dir (a network's directory of a
// data directory), by host, as the file is, writing nothing: for a
// listing of a directory a client may open later. A file that cannot be
// read or decoded lists no ban, and a ban that fails its checks is left
// out, each said in a note as Open says it; the file is left as it is
// (Open sets it aside).
func Read(dir string) ([]Ban, []string) {
	return readList(dir, time.Now)
}

// readList is Read with a clock.
func readList(dir string, now func() time.Time) ([]Ban, []string) {
	bans, dropped, err := readBans(filepath.Join(dir, bansFile))
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v: no bans listed; the file is left as it is (a scan or follow on the directory sets it aside)", bansFile, err)}
	}
	l := &List{now: now, max: maxBans, bans: make(map[string]Ban, len(bans))}
	for _, b := range bans {
		l.bans[b.Host] = b
	}
	l.prune()
	if len(dropped) > 0 {
		return l.list(), []string{droppedNote(dropped, len(bans)) + "; the file is left as it is (a scan or follow on the directory rewrites it)"}
	}
	return l.list(), nil
}

// readBans reads and checks the ban list at path (see decodeBans); a
// missing file holds none, but a symbolic link to no file is an error.
func readBans(path string) (bans []Ban, dropped []string, err error) {
	b, err := diskfile.ReadLimited(path, maxBansFileSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, danglingLink(path)
	}
	if err != nil {
		return nil, nil, err
	}
	return decodeBans(b)
}

// danglingLink is the error of a path that leads to no file: nil for
// one where nothing is, an error for a symbolic link.
func danglingLink(path string) error {
	if target, err := os.Readlink(path); err == nil {
		return fmt.Errorf("a symbolic link to %s, which leads to no file", target)
	}
	return nil
}

// Check reports a ban list kept in dir (a network's directory of a data
// directory) that is there but cannot be read: a symbolic link that
// leads to no file or loops, a file without permission to read it. Read
// lists no ban of such a file, with a note, as of a damaged one; a
// listing that must not pass over it checks it first. The error names
// the file. Anything but a regular file there (a directory, a named
// pipe, which Check does not wait on) is damaged, which Read notes.
func Check(dir string) error {
	path := filepath.Join(dir, bansFile)
	f, err := diskfile.OpenRegular(path, os.O_RDONLY, 0)
	switch {
	case err == nil:
		return f.Close()
	case errors.Is(err, diskfile.ErrNotRegular):
		return nil // listed as damaged (Read)
	case errors.Is(err, os.ErrNotExist):
		if err := danglingLink(path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	return err
}

// decodeBans decodes a ban list: a file of a known version, whole, or an
// error; then each ban on its own, kept if it is of a normalized host not
// listed before it, a reason of at most maxBanReason bytes, a start and
// an end after it, and no field but a ban's, and dropped otherwise (each
// dropped one says why); at most maxBans are kept.
func decodeBans(b []byte) (bans []Ban, dropped []string, err error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil, errors.New("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v bansRead
	if err := dec.Decode(&v); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the ban list")
	}
	if v.Version != 1 && v.Version != bansVersion {
		return nil, nil, fmt.Errorf("version %d, want 1 or %d", v.Version, bansVersion)
	}
	seen := make(map[string]bool, min(len(v.Bans), maxBans))
	for i, raw := range v.Bans {
		if len(bans) == maxBans {
			dropped = append(dropped, fmt.Sprintf("bans %d and after: more than %d", i, maxBans))
			break
		}
		b, err := decodeBan(raw, v.Version)
		if err == nil && seen[b.Host] {
			err = fmt.Errorf("host %s listed twice", b.Host)
		}
		if err != nil {
			dropped = append(dropped, fmt.Sprintf("ban %d: %v", i, err))
			continue
		}
		seen[b.Host] = true
		bans = append(bans, b)
	}
	return bans, dropped, nil
}

// decodeBan decodes and checks one ban of a list of version.
func decodeBan(raw json.RawMessage, version int) (Ban, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var b Ban
	if err := dec.Decode(&b); err != nil {
		return Ban{}, err
	}
	switch h, err := normalizeHost(b.Host); {
	case err != nil || h != b.Host:
		return Ban{}, fmt.Errorf("host %q not in normal form", b.Host)
	case len(b.Reason) > maxBanReason:
		return Ban{}, fmt.Errorf("a reason of %d bytes", len(b.Reason))
	case b.Since.IsZero() || !b.Until.After(b.Since):
		return Ban{}, fmt.Errorf("from %v until %v", b.Since, b.Until)
	case version == 1 && b.Proof:
		return Ban{}, errors.New("a proof in a list of version 1")
	}
	b.Reason = cutReason(b.Reason) // a file written by hand, or by another program
	return b, nil
}

// prune drops the bans that have ended.
func (l *List) prune() {
	now := l.now()
	for h, b := range l.bans {
		if !now.Before(b.Until) {
			delete(l.bans, h)
		}
	}
}

// list returns the bans, by host.
func (l *List) list() []Ban {
	out := make([]Ban, 0, len(l.bans))
	for _, b := range l.bans {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Ban) int { return cmp.Compare(a.Host, b.Host) })
	return out
}

// add bans host, making room beyond maxBans; a ban with proof stays one.
func (l *List) add(host, reason string, d time.Duration, proof bool) {
	now := l.now().UTC().Round(0) // as it reads back from the file
	b, ok := l.bans[host]
	if !ok || !now.Before(b.Until) {
		b = Ban{Host: host, Since: now}
	}
	b.Proof = b.Proof || proof
	b.Reason = cutReason(reason)
	b.Until = later(b.Until, now.Add(d))
	if !ok && len(l.bans) >= l.max {
		l.prune()
		for len(l.bans) >= l.max {
			delete(l.bans, l.oldest())
		}
	}
	l.bans[host] = b
}

// oldest returns the host banned first.
func (l *List) oldest() string {
	var first Ban
	for _, b := range l.bans {
		if first.Host == "" || b.Since.Before(first.Since) || b.Since.Equal(first.Since) && b.Host < first.Host {
			first = b
		}
	}
	return first.Host
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// cutReason cuts a reason to maxBanReason bytes, at a character's
// boundary, makes it valid UTF-8 and replaces its control characters
// (a reason may quote what a peer sent, and it is printed to terminals)
// with U+FFFD.
func cutReason(r string) string {
	r = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return '\uFFFD'
		}
		return c
	}, strings.ToValidUTF8(r, "\uFFFD"))
	if len(r) <= maxBanReason {
		return r
	}
	r = r[:maxBanReason]
	for !utf8.ValidString(r) {
		r = r[:len(r)-1]
	}
	return r
}

// save writes the ban list in force, whole or not at all (a list in
// memory only prunes).
func (l *List) save() error {
	l.prune()
	if l.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(bansJSON{Version: bansVersion, Bans: l.list()}, "", "\t")
	if err != nil {
		return err
	}
	return diskfile.WriteAtomic(l.path, append(b, '\n'), l.sync)
}

// Ban bans host for d from now (DefaultDuration if d is not
// positive), for reason (cut to 256 bytes), and writes the ban
// list. A host banned already stays banned until the later of its two
// ends, with the new reason. With 10,000 hosts banned, the ban that began
// first is dropped. host is an IP address or a host name, with or without
// a port, which is ignored but for a loopback address: bans are by host
// (see Ban.Host), and the nodes of this machine by port. The error wraps
// ErrBadHost for a host that is not one. The ban rests on no proof
// (BanWithProof makes those that do).
func (l *List) Ban(host, reason string, d time.Duration) error {
	return l.ban(host, reason, d, false)
}

// BanWithProof is Ban for a ban that rests on evidence the client checked
// itself (see Ban.Proof).
func (l *List) BanWithProof(host, reason string, d time.Duration) error {
	return l.ban(host, reason, d, true)
}

func (l *List) ban(host, reason string, d time.Duration, proof bool) error {
	h, err := normalizeHost(host)
	if err != nil {
		return err
	}
	if d <= 0 {
		d = DefaultDuration
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.add(h, reason, d, proof)
	if err := l.save(); err != nil {
		return fmt.Errorf("banlist: saving %s: %w", bansFile, err)
	}
	return nil
}

// Banned reports whether host is banned now, and its ban. A ban that has
// ended is no ban, and is dropped (from the file at the next write).
func (l *List) Banned(host string) (Ban, bool) {
	h, err := normalizeHost(host)
	if err != nil {
		return Ban{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.bans[h]
	if ok && !l.now().Before(b.Until) {
		delete(l.bans, h)
		return Ban{}, false
	}
	return b, ok
}

// Unban lifts host's ban, if there is one, and writes the ban list.
func (l *List) Unban(host string) error {
	h, err := normalizeHost(host)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if _, ok := l.bans[h]; !ok {
		return nil
	}
	delete(l.bans, h)
	if err := l.save(); err != nil {
		return fmt.Errorf("banlist: saving %s: %w", bansFile, err)
	}
	return nil
}

// Bans returns the bans in force, by host.
func (l *List) Bans() []Ban {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	return l.list()
}

// Close ends the list's use: a later Ban or Unban fails with ErrClosed
// (the directory may be someone else's by then). It is safe to call
// twice.
func (l *List) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}
