package gcs

import (
	"testing"

	"github.com/aead/siphash"
	"golang.org/x/sys/unix"
)

// TestSumAllReadsOnlyItsElements places elements of every length the
// lanes take against unreadable pages, at the start and at the end of a
// readable one, so that any read beyond an element's own bytes crashes
// the test.
func TestSumAllReadsOnlyItsElements(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer unix.Munmap(mem)
	mid := mem[page : 2*page : 2*page]
	for i := range mid {
		mid[i] = byte(i * 7)
	}
	if err := unix.Mprotect(mem[:page], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	if err := unix.Mprotect(mem[2*page:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	var elems [][]byte
	for n := 1; n < 8*laneBlocks+8; n++ {
		for range 8 { // full groups of each length
			elems = append(elems, mid[:n:n], mid[page-n:])
		}
	}
	var key [16]byte
	dst := make([]uint64, len(elems))
	newSipKey(&key).sumAll(dst, elems)
	for i, e := range elems {
		if want := siphash.Sum64(e, &key); dst[i] != want {
			t.Fatalf("element %d (%d bytes): %#x, want %#x", i, len(e), dst[i], want)
		}
	}
}
