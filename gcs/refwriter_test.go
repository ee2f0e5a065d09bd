package gcs

// refWriter is a plain reference encoder, independent of the one in
// encode: tests use it to craft streams, valid and invalid.
type refWriter struct {
	out  []byte
	acc  uint64 // pending bits in the low nacc bits
	nacc uint
}

// write appends the low n bits of v, n <= 32.
func (w *refWriter) write(v uint64, n uint) {
	w.acc = w.acc<<n | v
	w.nacc += n
	if w.nacc >= 32 {
		w.nacc -= 32
		w.out = append(w.out, byte(w.acc>>(w.nacc+24)), byte(w.acc>>(w.nacc+16)), byte(w.acc>>(w.nacc+8)), byte(w.acc>>w.nacc))
	}
}

// writeCode appends the Golomb-Rice code of delta with parameter p: the
// quotient in unary (ones closed by a zero), then p remainder bits.
func (w *refWriter) writeCode(delta uint64, p uint) {
	q := delta >> p
	rem := delta & (1<<p - 1)
	if q+1+uint64(p) <= 32 {
		w.write((1<<q-1)<<(p+1)|rem, uint(q)+1+p)
		return
	}
	for ; q >= 32; q -= 32 {
		w.write(1<<32-1, 32)
	}
	w.write((1<<q-1)<<1, uint(q)+1)
	w.write(rem, p)
}

// flush pads the stream with zero bits to a whole byte.
func (w *refWriter) flush() {
	for w.nacc >= 8 {
		w.nacc -= 8
		w.out = append(w.out, byte(w.acc>>w.nacc))
	}
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
}
