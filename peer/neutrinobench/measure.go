package neutrinobench

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Cost is what one run of a function took.
type Cost struct {
	// Wall is the elapsed time.
	Wall time.Duration
	// CPU is the user plus system CPU time of the whole process
	// (getrusage deltas): the client's work, since the nodes are other
	// processes.
	CPU time.Duration
	// PeakHeap is the high-water mark of the Go heap in use (HeapInuse:
	// the spans holding objects), sampled every millisecond, less the heap
	// in use right before the run, after a garbage collection.
	PeakHeap uint64
}

// heapInUse names the runtime metrics that add up to HeapInuse.
var heapInUse = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	var total uint64
	for _, x := range s {
		total += x.Value.Uint64()
	}
	return total
}

// measure runs f and returns its cost.
func measure(f func() error) (Cost, error) {
	runtime.GC()
	samples := make([]metrics.Sample, len(heapInUse))
	for i, name := range heapInUse {
		samples[i].Name = name
	}
	base := readHeap(samples)
	peak := base
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		own := make([]metrics.Sample, len(samples))
		copy(own, samples)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := readHeap(own); h > peak {
				peak = h
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0 := processCPU()
	start := time.Now()
	err := f()
	wall := time.Since(start)
	cpu := processCPU() - cpu0
	close(stop)
	wg.Wait()
	if h := readHeap(samples); h > peak {
		peak = h
	}
	return Cost{Wall: wall, CPU: cpu, PeakHeap: peak - base}, err
}
