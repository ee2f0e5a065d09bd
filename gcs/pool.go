package gcs

import "sync"

// bufferPool holds hash buffers for Build and large MatchAny calls, so
// that repeated calls do not allocate (MatchAny) or allocate only their
// result (Build), which also spares the garbage collector.
var bufferPool = sync.Pool{New: func() any { return new([]uint64) }}

// getBuffer returns a pooled buffer of length n.
func getBuffer(n int) *[]uint64 {
	bp := bufferPool.Get().(*[]uint64)
	if cap(*bp) < n {
		*bp = make([]uint64, n)
	}
	*bp = (*bp)[:n]
	return bp
}

// putBuffer returns a buffer to the pool, unless it is too large to keep.
func putBuffer(bp *[]uint64) {
	if cap(*bp) <= 1<<20 {
		bufferPool.Put(bp)
	}
}
