package store

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
	"time"
	"unicode/utf8"
)

// BansFile is the ban list's file in the store's directory.
const BansFile = "bans.json"

// DefaultBanDuration is how long a ban lasts when Ban is given no
// duration: a day, as Bitcoin Core's -bantime default.
const DefaultBanDuration = 24 * time.Hour

// MaxBans caps the bans a store keeps: Ban drops the oldest beyond it.
const MaxBans = 10000

// MaxBanReason caps a ban's reason, in bytes; Ban cuts longer ones.
const MaxBanReason = 256

// bansVersion is the version of the ban list's format.
const bansVersion = 1

// maxBansFileSize bounds what reading the ban list may take: MaxBans bans
// of the longest host and reason, every byte of the reason escaped.
const maxBansFileSize = MaxBans * (maxHostLen + 6*MaxBanReason + 128)

// maxHostLen is the longest host name (RFC 1035: 253 characters).
const maxHostLen = 253

// ErrBadHost is returned by Ban and Unban for a host that is neither an
// IP address nor a host name.
var ErrBadHost = errors.New("store: not an IP address or host name")

// Ban is a host a client refuses to connect to until a time, and why.
type Ban struct {
	// Host is an IP address in its canonical form (IPv4-mapped IPv6
	// addresses as IPv4, IPv6 in RFC 5952 form) or a host name in lower
	// case, without a port.
	Host   string    `json:"host"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// bansJSON is the ban list's file.
type bansJSON struct {
	Version int   `json:"version"`
	Bans    []Ban `json:"bans"`
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

// banList is a store's bans in memory, by host, and the file that keeps
// them.
type banList struct {
	path string
	sync bool
	now  func() time.Time
	max  int // MaxBans; lower in tests
	bans map[string]Ban
}

// loadBans reads the ban list at path. A file that cannot be read or
// fails the checks is set aside; the second result says so.
func loadBans(path string, sync bool, now func() time.Time) (*banList, string) {
	l := &banList{path: path, sync: sync, now: now, max: MaxBans, bans: map[string]Ban{}}
	bans, err := readBans(path)
	if err == nil {
		for _, b := range bans {
			l.bans[b.Host] = b
		}
		l.prune()
		return l, ""
	}
	note := fmt.Sprintf("%s: %v", BansFile, err)
	if aside, serr := setAside(path, now()); serr != nil {
		note += fmt.Sprintf("; it could not be set aside (%v), and will be replaced at the next ban", serr)
	} else {
		note += ": set aside as " + aside
	}
	return l, note + "; no bans were loaded"
}

// readBans reads and checks the ban list at path; a missing file holds
// none.
func readBans(path string) ([]Ban, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBansFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBansFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxBansFileSize)
	}
	return decodeBans(b)
}

// decodeBans decodes and checks a ban list: its version, at most MaxBans
// bans, each of a normalized host listed once, a reason of at most
// MaxBanReason bytes, a start and an end after it.
func decodeBans(b []byte) ([]Ban, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v bansJSON
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the ban list")
	}
	if v.Version != bansVersion {
		return nil, fmt.Errorf("version %d, want %d", v.Version, bansVersion)
	}
	if len(v.Bans) > MaxBans {
		return nil, fmt.Errorf("%d bans, more than %d", len(v.Bans), MaxBans)
	}
	seen := make(map[string]bool, len(v.Bans))
	for i, b := range v.Bans {
		switch h, err := normalizeHost(b.Host); {
		case err != nil || h != b.Host:
			return nil, fmt.Errorf("ban %d: host %q not in normal form", i, b.Host)
		case seen[h]:
			return nil, fmt.Errorf("ban %d: host %s listed twice", i, h)
		case len(b.Reason) > MaxBanReason:
			return nil, fmt.Errorf("ban %d: a reason of %d bytes", i, len(b.Reason))
		case b.Since.IsZero() || !b.Until.After(b.Since):
			return nil, fmt.Errorf("ban %d: from %v until %v", i, b.Since, b.Until)
		}
		seen[b.Host] = true
	}
	return v.Bans, nil
}

// prune drops the bans that have ended.
func (l *banList) prune() {
	now := l.now()
	for h, b := range l.bans {
		if !now.Before(b.Until) {
			delete(l.bans, h)
		}
	}
}

// list returns the bans, by host.
func (l *banList) list() []Ban {
	out := make([]Ban, 0, len(l.bans))
	for _, b := range l.bans {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Ban) int { return cmp.Compare(a.Host, b.Host) })
	return out
}

// add bans host, making room beyond MaxBans.
func (l *banList) add(host, reason string, d time.Duration) {
	now := l.now().UTC().Round(0) // as it reads back from the file
	b, ok := l.bans[host]
	if !ok || !now.Before(b.Until) {
		b = Ban{Host: host, Since: now}
	}
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
func (l *banList) oldest() string {
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

// cutReason cuts a reason to MaxBanReason bytes, at a character's
// boundary, and makes it valid UTF-8.
func cutReason(r string) string {
	r = strings.ToValidUTF8(r, "\uFFFD")
	if len(r) <= MaxBanReason {
		return r
	}
	r = r[:MaxBanReason]
	for !utf8.ValidString(r) {
		r = r[:len(r)-1]
	}
	return r
}

// save writes the ban list in force, whole or not at all.
func (l *banList) save() error {
	l.prune()
	b, err := json.MarshalIndent(bansJSON{Version: bansVersion, Bans: l.list()}, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(l.path, append(b, '\n'), l.sync)
}

// writeAtomic writes b to path through a temporary file renamed into
// place, so that the file is whole, old or new, after a crash; with sync,
// the new one is on stable storage when it returns.
func writeAtomic(path string, b []byte, sync bool) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

// Ban bans host for d from now (DefaultBanDuration
// if d is not positive), for reason (cut to MaxBanReason bytes), and
// writes the ban list. A host banned already stays banned until the
// later of its two ends, with the new reason. With MaxBans hosts banned,
// the ban that began first is dropped. host is an IP address or a host
// name, with or without a port, which is ignored but for a loopback
// address: bans are by host (see Ban.Host), and the nodes of this machine
// by port. The error wraps ErrBadHost for a host that is not one.
func (s *Store) Ban(host, reason string, d time.Duration) error {
	h, err := normalizeHost(host)
	if err != nil {
		return err
	}
	if d <= 0 {
		d = DefaultBanDuration
	}
	s.banMu.Lock()
	defer s.banMu.Unlock()
	if s.isClosed() {
		return ErrClosed
	}
	s.bans.add(h, reason, d)
	if err := s.bans.save(); err != nil {
		return fmt.Errorf("store: saving %s: %w", BansFile, err)
	}
	return nil
}

// Banned reports whether host is banned now, and its
// ban. A ban that has ended is no ban, and is dropped (from the file at
// the next write).
func (s *Store) Banned(host string) (Ban, bool) {
	h, err := normalizeHost(host)
	if err != nil {
		return Ban{}, false
	}
	s.banMu.Lock()
	defer s.banMu.Unlock()
	b, ok := s.bans.bans[h]
	if ok && !s.bans.now().Before(b.Until) {
		delete(s.bans.bans, h)
		return Ban{}, false
	}
	return b, ok
}

// Unban lifts host's ban, if there is one, and writes the ban list.
func (s *Store) Unban(host string) error {
	h, err := normalizeHost(host)
	if err != nil {
		return err
	}
	s.banMu.Lock()
	defer s.banMu.Unlock()
	if s.isClosed() {
		return ErrClosed
	}
	if _, ok := s.bans.bans[h]; !ok {
		return nil
	}
	delete(s.bans.bans, h)
	if err := s.bans.save(); err != nil {
		return fmt.Errorf("store: saving %s: %w", BansFile, err)
	}
	return nil
}

// Bans returns the bans in force, by host.
func (s *Store) Bans() []Ban {
	s.banMu.Lock()
	defer s.banMu.Unlock()
	s.bans.prune()
	return s.bans.list()
}
