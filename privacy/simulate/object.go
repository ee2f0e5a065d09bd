package simulate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object of a report, read field by field, so that fields
// added to the reports later are ignored, or found as intervals, and
// never break the scoring.
//
// A report is checked once (decodeReport) and then split, not decoded:
// each object into its keys and the bytes of their values, each list into
// the bytes of its items, numbers and plain strings read off their bytes.
// Decoding every level with encoding/json checked and scanned each byte
// once per level above it, which made most of the cost of evaluating a
// fetches report (BenchmarkEvaluateFetches).
type object map[string]json.RawMessage

// decodeReport decodes a whole report as an object, checking it is JSON;
// anything else gives nil.
func decodeReport(raw []byte) object {
	if !json.Valid(raw) {
		return nil
	}
	return decodeObject(raw)
}

// decodeObject splits raw, part of a report decodeReport checked, as an
// object; anything else gives nil. Of a key given twice, the last value
// counts, as encoding/json has it.
func decodeObject(raw json.RawMessage) object {
	s := splitter{b: raw}
	s.space()
	if !s.take('{') {
		return nil
	}
	o := object{}
	if s.space(); s.take('}') {
		return o
	}
	for {
		s.space()
		key, ok := s.key()
		if !ok {
			return nil
		}
		if s.space(); !s.take(':') {
			return nil
		}
		s.space()
		v, ok := s.value()
		if !ok {
			return nil
		}
		o[key] = v
		s.space()
		if s.take('}') {
			return o
		}
		if !s.take(',') {
			return nil
		}
	}
}

// decodeList splits raw, part of a report decodeReport checked, as a
// list: the bytes of its items, or false when it is not one.
func decodeList(raw json.RawMessage) ([]json.RawMessage, bool) {
	s := splitter{b: raw}
	s.space()
	if !s.take('[') {
		return nil, false
	}
	out := []json.RawMessage{}
	if s.space(); s.take(']') {
		return out, true
	}
	for {
		s.space()
		v, ok := s.value()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		s.space()
		if s.take(']') {
			return out, true
		}
		if !s.take(',') {
			return nil, false
		}
	}
}

// splitter walks JSON known to be valid, finding where values end.
type splitter struct {
	b []byte
	i int
}

func (s *splitter) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *splitter) take(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads an object's key, unescaped.
func (s *splitter) key() (string, bool) {
	start := s.i
	if !s.skipString() {
		return "", false
	}
	raw := s.b[start:s.i]
	if plain(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return "", false
	}
	return k, true
}

// skipString passes a string, its quotes included.
func (s *splitter) skipString() bool {
	if !s.take('"') {
		return false
	}
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return false
		}
		s.i += j + 1
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		escapes := 0
		for k := s.i - 2; k >= 0 && s.b[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return true
		}
	}
}

// value passes one value and returns its bytes.
func (s *splitter) value() (json.RawMessage, bool) {
	start := s.i
	if s.i >= len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '"':
		if !s.skipString() {
			return nil, false
		}
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return nil, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return nil, false
		}
	default:
		for s.i < len(s.b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(s.b[s.i])) {
			s.i++
		}
		if s.i == start {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// str returns a string field, or "".
func (o object) str(key string) string {
	raw, ok := o[key]
	if !ok {
		return ""
	}
	if plain(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// plain reports whether raw is a string of valid UTF-8 without escapes:
// its bytes between the quotes are its value.
func plain(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
}

// num returns a number field, or nil when absent or not a number; null
// reads as 0, as encoding/json leaves it.
func (o object) num(key string) *float64 {
	raw, ok := o[key]
	if ok && string(raw) == "null" {
		return new(float64)
	}
	if !ok || len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		// Beyond float64's range, which encoding/json refuses too.
		return nil
	}
	return &f
}

// boolean returns a boolean field and whether it is one (null reads as
// false, as encoding/json leaves it).
func (o object) boolean(key string) (v, ok bool) {
	switch string(o[key]) {
	case "true":
		return true, true
	case "false", "null":
		return false, true
	}
	return false, false
}

// strs returns a field that is a list of strings, or nil.
func (o object) strs(key string) []string {
	raw, ok := o[key]
	if !ok {
		return nil
	}
	if string(raw) == "null" {
		return nil
	}
	items, ok := decodeList(raw)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if len(it) == 0 || it[0] != '"' {
			if string(it) == "null" {
				out = append(out, "") // encoding/json leaves a null item its zero value
				continue
			}
			return nil
		}
		out = append(out, object{"": it}.str(""))
	}
	return out
}

// objects returns a field that is a list of objects, or nil.
func (o object) objects(key string) []object {
	raw, ok := o[key]
	if !ok {
		return nil
	}
	if string(raw) == "null" {
		return []object{}
	}
	items, ok := decodeList(raw)
	if !ok {
		return nil
	}
	out := make([]object, 0, len(items))
	for _, r := range items {
		if d := decodeObject(r); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// unknownKeys returns the object's keys that are neither known nor part
// of an interval, sorted; a key whose value is null, which gives
// nothing to score, is none of them.
func unknownKeys(o object, known []string, used map[string]bool) []string {
	var out []string
	for k, v := range o {
		if !slices.Contains(known, k) && !used[k] && string(v) != "null" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
