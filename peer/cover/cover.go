package cover

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// FileName is the cover file's name in a network's data directory; the
// good file before the last save is FileName + ".prev".
const FileName = "covers.dat"

// Profile is what a peer watching downloads sees of a script over the
// scanned range, as the cover was drawn to match a wallet's script.
type Profile struct {
	Class uint8  // appearances in the range, 1..MaxClass (MaxClass or more)
	Type  uint8  // script type, as the draw numbers them (0..MaxType)
	First int32  // height of the script's first appearance
	Drawn int32  // height of the tip when it was drawn
	Group uint64 // a cover chain's scripts, or a candidate chain's, share it (0: alone)
	// Riders counts the other scripts of the script's transactions
	// (outputs, and the scripts inputs show they spend) over the Read
	// appearances whose blocks were read: a peer reading the blocks
	// sees them beside it, so covers are drawn with riders per
	// appearance (Riders/Read) like the wallet's scripts'. Read 0: not
	// known (files before version 5).
	Riders uint32
	Read   uint16
}

// RidersPer is the riders per appearance, and whether any appearance
// was read.
func (p Profile) RidersPer() (float64, bool) {
	if p.Read == 0 {
		return 0, false
	}
	return float64(p.Riders) / float64(p.Read), true
}

// Explore is where a client's search for cover candidates stands,
// kept across sessions: Short counts its scans in a row whose covers
// fell short of the target, Swept is how far its sweep of the range's
// blocks has gone (a client's own measure of the blocks it explored, so
// that later sessions explore others), and Explored counts the blocks
// the sweep gave those scans short in a row (once it reaches the
// range's, the range was explored whole and more scans find nothing
// new) of the range From..To they scanned: a scan of another range
// counts from none, since the range's new blocks may hold new
// candidates.
type Explore struct {
	Short    int
	Swept    uint64
	Explored uint64
	From, To int32
}

// MatchKey names a filter match of a script in a block, without the
// script: the first 8 bytes of SHA-256 of the block's hash and the
// script (MatchKeyOf).
type MatchKey [8]byte

// MatchKeyOf is the key of script's match in block.
func MatchKeyOf(block chainhash.Hash, script []byte) MatchKey {
	h := sha256.New()
	h.Write(block[:])
	h.Write(script)
	var k MatchKey
	copy(k[:], h.Sum(nil))
	return k
}

// Cover is a cover script, in use or in reserve, and its profile.
type Cover struct {
	Script  []byte // an output script a basic filter holds
	Profile Profile
}

// Set is the cover file's contents in memory. Its methods may be called
// from several goroutines at once.
type Set struct {
	path  string
	mu    sync.Mutex
	c     *contents
	size  int            // bytes of the file c encodes to
	disk  []byte         // the good file at path, if any: the next save's .prev
	index map[string]int // scripts by where they are (see where)
}

// Options say how Open treats a missing or damaged file.
type Options struct {
	// Existing: the store beside the file already holds a chain, so a
	// missing file was deleted, which is damage, not a first run.
	Existing bool
	// New accepts a new, empty set in place of a damaged or deleted
	// file that covers.dat.prev cannot replace (the note warns that
	// earlier sessions' covers are gone).
	New bool
}

// ErrDamaged is wrapped by every *DamagedError.
var ErrDamaged = errors.New("cover file damaged")

// ErrFull: the set already holds MaxCovers covers, MaxReserve scripts in
// reserve, MaxRefuted false matches, or MaxFileSize bytes.
var ErrFull = errors.New("cover file full")

// ErrDuplicate: the script is a cover or in the reserve already.
var ErrDuplicate = errors.New("script already in the cover file")

// DamagedError: the cover file at Path is damaged or was deleted, and no
// good copy replaces it. SetAside names where the damaged file was moved
// (empty if it was missing). It wraps ErrDamaged and the cause.
type DamagedError struct {
	Path     string
	SetAside string
	Err      error
}

func (e *DamagedError) Error() string {
	msg := fmt.Sprintf("cover file %s: %v", e.Path, e.Err)
	if e.SetAside != "" {
		msg += "; set aside as " + e.SetAside
	}
	return msg + ": a new cover set would let anyone who kept earlier sessions strip the covers they fetched"
}

// Unwrap returns ErrDamaged and the cause.
func (e *DamagedError) Unwrap() []error { return []error{ErrDamaged, e.Err} }

// Open opens the cover set of params' network in dir (the network's
// data directory, DataDir/<network>) with no Options: a missing file is
// a first run, a new set with a random seed, written by the first Save.
// The notes say what was recovered from, if anything.
func Open(dir string, params *chaincfg.Params) (*Set, []string, error) {
	return OpenWith(dir, params, Options{})
}

// OpenWith is Open with opts. A damaged file, or a missing one with
// opts.Existing or beside a covers.dat.prev (Save never removes the
// file: it was deleted), is replaced by covers.dat.prev if that is good,
// else by a new set if opts.New, a note saying which, else it is an error
// wrapping a *DamagedError; the damaged file is set aside in every case.
func OpenWith(dir string, params *chaincfg.Params, opts Options) (*Set, []string, error) {
	path := filepath.Join(dir, FileName)
	s, damage, err := load(path, params.Name)
	if err != nil || damage == nil && s != nil {
		return s, nil, err
	}
	missing := errors.Is(damage, fs.ErrNotExist)
	aside := ""
	if !missing {
		if aside, err = diskfile.SetAside(path, time.Now()); err != nil {
			return nil, nil, fmt.Errorf("cover: setting aside %s: %w", path, err)
		}
	}
	what := fmt.Sprintf("cover file %s: %v", path, damage)
	if aside != "" {
		what += "; set aside as " + aside
	}
	if prev, _, _ := load(path+".prev", params.Name); prev != nil {
		// covers.dat.prev holds it already, and covers.dat will.
		prev.path, prev.disk = path, nil
		return prev, []string{fmt.Sprintf("%s; using %s.prev, the file before the last save, with %d covers: covers drawn after it are lost, and sessions that fetched them can tell the others apart",
			what, FileName, len(prev.c.covers))}, nil
	}
	if missing && !opts.Existing {
		s, err := newSet(path, params.Name)
		return s, nil, err
	}
	if opts.New {
		s, err := newSet(path, params.Name)
		return s, []string{what + "; a new cover set started: anyone holding earlier sessions can strip the covers they fetched"}, err
	}
	return nil, nil, &DamagedError{Path: path, SetAside: aside, Err: damage}
}

// load reads the file at path. It returns the set, or what made the file
// damaged (fs.ErrNotExist if it is missing), or another error.
func load(path, network string) (s *Set, damage, err error) {
	data, err := diskfile.ReadLimited(path, MaxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, diskfile.ErrTooLarge), errors.Is(err, diskfile.ErrNotRegular):
		return nil, err, nil
	case err != nil:
		return nil, nil, fmt.Errorf("cover: %w", err)
	}
	c, err := decode(data, network)
	if err != nil {
		return nil, err, nil
	}
	// The size the set writes: a file of an earlier version grows when
	// written in the current one.
	return &Set{path: path, c: c, size: len(c.encode()), disk: data}, nil, nil
}

// newSet is an empty set of network with a random seed.
func newSet(path, network string) (*Set, error) {
	c := &contents{network: network, chance: map[int]uint64{}}
	if _, err := rand.Read(c.seed[:]); err != nil {
		return nil, fmt.Errorf("cover: %w", err)
	}
	return &Set{path: path, c: c, size: len(c.encode())}, nil
}

// Path is the cover file's path.
func (s *Set) Path() string { return s.path }

// Seed is the set's random seed, which keys its draws.
func (s *Set) Seed() [32]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.seed
}

// Covers returns the covers in use, in the order they were added.
func (s *Set) Covers() []Cover {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneCovers(s.c.covers)
}

// Reserve returns the scripts profiled and not yet in use.
func (s *Set) Reserve() []Cover {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneCovers(s.c.reserve)
}

// Scripts returns the covers' scripts, for a filter matcher.
func (s *Set) Scripts() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.c.covers))
	for i, c := range s.c.covers {
		out[i] = bytes.Clone(c.Script)
	}
	return out
}

// Explore returns the exploration state.
func (s *Set) Explore() Explore {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.explore
}

// SetExplore replaces the exploration state (Short at most 65,536,
// Explored below 2^32, heights From and To not negative).
func (s *Set) SetExplore(e Explore) error {
	if e.Short < 0 || e.Short > maxShort || e.Explored > math.MaxUint32 || e.From < 0 || e.To < 0 {
		return fmt.Errorf("cover: %d scans short, %d blocks explored of %d..%d", e.Short, e.Explored, e.From, e.To)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.c.explore
	s.c.explore = e
	size := len(s.c.encode())
	if size > MaxFileSize {
		s.c.explore = old
		return ErrFull
	}
	s.size = size
	return nil
}

// Refuted reports whether the set holds k as a false match: a filter
// match of a watched script in a block that, fetched, does not hold it
// (a false positive of the filter), which profiles leave out.
func (s *Set) Refuted(k MatchKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := slices.BinarySearchFunc(s.c.refuted, k, compareKeys)
	return ok
}

// Refute keeps k as a false match (Refuted); ErrFull beyond MaxRefuted.
func (s *Set) Refute(k MatchKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := slices.BinarySearchFunc(s.c.refuted, k, compareKeys)
	if ok {
		return nil
	}
	if len(s.c.refuted) >= MaxRefuted {
		return ErrFull
	}
	s.c.refuted = slices.Insert(s.c.refuted, i, k)
	if size := len(s.c.encode()); size > MaxFileSize {
		s.c.refuted = slices.Delete(s.c.refuted, i, i+1)
		return ErrFull
	}
	s.size = len(s.c.encode())
	return nil
}

func compareKeys(a, b MatchKey) int { return bytes.Compare(a[:], b[:]) }

// Decoys returns the decoys kept, in the order they were kept: scripts
// neither watched nor covers whose blocks the client fetched on purpose
// (the candidate chains it explored, those it drew and left out), whose
// matches a leak report must not count as chance (leak.Input.Decoys).
func (s *Set) Decoys() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.c.decoys))
	for i, d := range s.c.decoys {
		out[i] = bytes.Clone(d)
	}
	return out
}

// AddDecoy keeps script as a decoy (Decoys), once: a script kept already
// is left alone. ErrFull beyond MaxDecoys or the file's bound: the
// decoys are never dropped, since blocks fetched in earlier sessions stay
// in what the peers were asked.
func (s *Set) AddDecoy(script []byte) error {
	if err := checkDecoy(script); err != nil {
		return fmt.Errorf("cover: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.c.decoys, func(d []byte) bool { return bytes.Equal(d, script) }) {
		return nil
	}
	if len(s.c.decoys) >= MaxDecoys {
		return ErrFull
	}
	n := len(s.c.decoys)
	size := s.size - uvarintLen(n) + uvarintLen(n+1) + uvarintLen(len(script)) + len(script)
	if size > MaxFileSize {
		return ErrFull
	}
	s.c.decoys = append(s.c.decoys, bytes.Clone(script))
	s.size = size
	return nil
}

// uvarintLen is the bytes of n as a varint.
func uvarintLen(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }

// Chance returns the chance groups per class at the last scan.
func (s *Set) Chance() map[int]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]float64, len(s.c.chance))
	for k, v := range s.c.chance {
		out[k] = float64(v) / 1000
	}
	return out
}

// SetChance replaces the chance groups per class (1..MaxClass, counts
// of zero or more, kept to a thousandth).
func (s *Set) SetChance(chance map[int]float64) error {
	row := make(map[int]uint64, len(chance))
	for k, v := range chance {
		if k < 1 || k > MaxClass || !(v >= 0 && v*1000 < math.MaxInt64/2) {
			return fmt.Errorf("cover: chance groups %v of class %d", v, k)
		}
		row[k] = uint64(math.Round(v * 1000))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.c.chance
	s.c.chance = row
	if size := len(s.c.encode()); size > MaxFileSize {
		s.c.chance = old
		return ErrFull
	}
	s.size = len(s.c.encode())
	return nil
}

// Add puts c in use, taking it from the reserve if it is there. Covers
// are never removed: a cover dropped is one an attacker intersecting
// sessions sees go.
func (s *Set) Add(c Cover) error {
	return s.add(c, true)
}

// Reclass sets the class of a script in reserve, as a scan profiled it,
// so that a later scan profiles the rare classes first; a script not in
// reserve is left alone (false).
func (s *Set) Reclass(script []byte, class uint8) (bool, error) {
	if class < 1 || class > MaxClass {
		return false, fmt.Errorf("cover: class %d outside 1..%d", class, MaxClass)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.where()[string(script)] != inReserve {
		return false, nil
	}
	i := slices.IndexFunc(s.c.reserve, func(e Cover) bool { return bytes.Equal(e.Script, script) })
	s.c.reserve[i].Profile.Class = class // a byte: the file's size is the same
	return true, nil
}

// AddReserve keeps c in reserve, for a later Add.
func (s *Set) AddReserve(c Cover) error {
	return s.add(c, false)
}

func (s *Set) add(c Cover, use bool) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("cover: %w", err)
	}
	c.Script = bytes.Clone(c.Script)
	s.mu.Lock()
	defer s.mu.Unlock()
	where := s.where()
	fromReserve := where[string(c.Script)] == inReserve
	switch {
	case where[string(c.Script)] == inUse, fromReserve && !use:
		return fmt.Errorf("cover: %x: %w", c.Script, ErrDuplicate)
	case use && len(s.c.covers) >= MaxCovers, !use && len(s.c.reserve) >= MaxReserve:
		return ErrFull
	}
	covers, reserve := len(s.c.covers), len(s.c.reserve)
	i := -1
	size := s.size - countsSize(covers, reserve) + c.entrySize()
	if fromReserve {
		i = slices.IndexFunc(s.c.reserve, func(e Cover) bool { return bytes.Equal(e.Script, c.Script) })
		size -= s.c.reserve[i].entrySize()
		reserve--
	}
	if use {
		covers++
	} else {
		reserve++
	}
	if size += countsSize(covers, reserve); size > MaxFileSize {
		return ErrFull
	}
	if i >= 0 {
		s.c.reserve = slices.Delete(s.c.reserve, i, i+1)
	}
	if use {
		s.c.covers = append(s.c.covers, c)
		where[string(c.Script)] = inUse
	} else {
		s.c.reserve = append(s.c.reserve, c)
		where[string(c.Script)] = inReserve
	}
	s.size = size
	return nil
}

// Where a script is in the set.
const (
	_ = iota // nowhere
	inUse
	inReserve
)

// where returns the set's scripts by where they are, made on first use.
func (s *Set) where() map[string]int {
	if s.index == nil {
		s.index = map[string]int{}
		for _, c := range s.c.covers {
			s.index[string(c.Script)] = inUse
		}
		for _, c := range s.c.reserve {
			s.index[string(c.Script)] = inReserve
		}
	}
	return s.index
}

// countsSize is the bytes of the two lists' counts in the file.
func countsSize(covers, reserve int) int {
	return len(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(covers)), uint64(reserve)))
}

// Save writes the set to its file, whole or not at all, after keeping the
// good file before it as covers.dat.prev. A set unchanged since it was
// read or saved is not written again.
func (s *Set) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := s.c.encode()
	if s.disk != nil && bytes.Equal(data, s.disk) {
		return nil
	}
	if len(data) > MaxFileSize {
		// A file of an earlier version, near the bound, grown in the
		// current one: written, it would not read back.
		return fmt.Errorf("cover: %d bytes to write, beyond %d: %w", len(data), MaxFileSize, ErrFull)
	}
	if s.disk != nil {
		if err := diskfile.WriteAtomicMode(s.path+".prev", s.disk, true, 0o600); err != nil {
			return fmt.Errorf("cover: %w", err)
		}
	}
	if err := diskfile.WriteAtomicMode(s.path, data, true, 0o600); err != nil {
		return fmt.Errorf("cover: %w", err)
	}
	s.disk = data
	return nil
}

func cloneCovers(cs []Cover) []Cover {
	out := make([]Cover, len(cs))
	for i, c := range cs {
		out[i] = Cover{Script: bytes.Clone(c.Script), Profile: c.Profile}
	}
	return out
}
