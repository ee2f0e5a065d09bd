package attack

import (
	"encoding/binary"
	"slices"
)

// twinKey is what a session's matches say of its wallet under any
// tweak: the lines it matched and its filters' sizes and numbers of hash
// functions. Filters of the same elements under other tweaks match the
// same candidates of the wallet and others by chance: where chance gives
// next to none, they match the very same lines. "" for a session that
// matched nothing, whose match list is cut short, or blind.
func twinKey(s *linkSession) string {
	if s.matched == 0 || s.truncated || s.blind || len(s.lines) == 0 {
		return ""
	}
	b := make([]byte, 0, 8*len(s.keys)+4*len(s.lines))
	for _, k := range s.keys {
		b = binary.LittleEndian.AppendUint32(b, uint32(k.size))
		b = binary.LittleEndian.AppendUint32(b, k.k)
	}
	b = append(b, 0xff)
	lines := slices.Clone(s.lines)
	slices.Sort(lines)
	for _, l := range lines {
		b = binary.AppendUvarint(b, uint64(l))
	}
	return string(b)
}

// twinSessions is how many sessions of the same matches (see weighTwins)
// weigh as themselves in the size prior's fit: as many as a wallet of
// package simulate's regimes loads (1 to 8), so that a wallet's own
// sessions keep their weight.
const twinSessions = 8

// weighTwins raises each session's copies (see linkSession.evidence) so
// that the sessions of its twinKey, n of them, weigh at most about
// twinSessions sessions together in the size prior's fit: their copies
// at least n/twinSessions rounded up. Such sessions matched the very same
// candidates through filters of the same sizes and hash functions:
// copies of one filter under other tweaks (the same elements), where
// chance gives next to no match, as a node injecting them would make
// them; or a wallet's own sessions that matched the same lines, which
// are one wallet.
func weighTwins(sessions []linkSession) {
	keys := make([]string, len(sessions))
	seen := make(map[string]int, len(sessions))
	for i := range sessions {
		if keys[i] = twinKey(&sessions[i]); keys[i] != "" {
			seen[keys[i]]++
		}
	}
	for i, k := range keys {
		if n := (seen[k] + twinSessions - 1) / twinSessions; k != "" && n > sessions[i].copies {
			sessions[i].copies = n
		}
	}
}
