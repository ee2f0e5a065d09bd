package neutrinobench

import (
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
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
	// PeakRSS is the growth of the process's peak resident set size
	// (VmHWM, reset before the run) over its size before the run, after
	// the heap's free memory was returned to the system: the Go heap and
	// everything else, such as the pages of a memory-mapped database.
	// Zero where the system does not tell.
	PeakRSS uint64
	// NodeCPU is the CPU time the nodes' processes used meanwhile (in
	// the kernel's 10 ms ticks): serving the client. Zero where the
	// system does not tell.
	NodeCPU time.Duration
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

// meter measures the cost of what runs between startMeter and stop.
type meter struct {
	start    time.Time
	cpu      time.Duration
	nodes    []int // pids of the nodes
	nodeCPU  time.Duration
	base     uint64 // heap in use at the start
	peak     uint64 // written by the sampler until it is stopped
	rss0     uint64
	rssOK    bool
	samples  []metrics.Sample
	stopping chan struct{}
	sampler  sync.WaitGroup
}

// startMeter collects the garbage, returns free memory to the system,
// resets the peak resident set size and starts the heap sampler; the
// measured run starts when it returns. nodes are the pids of the node
// processes whose CPU time is counted too.
func startMeter(nodes []int) *meter { return startMeterEvery(nodes, time.Millisecond) }

// startMeterEvery is startMeter with the heap sampled every interval, for
// runs long enough that sampling every millisecond would cost more than
// it tells.
func startMeterEvery(nodes []int, every time.Duration) *meter {
	debug.FreeOSMemory()
	m := &meter{stopping: make(chan struct{}), nodes: nodes}
	m.rss0, m.rssOK = resetPeakRSS()
	m.samples = make([]metrics.Sample, len(heapInUse))
	for i, name := range heapInUse {
		m.samples[i].Name = name
	}
	m.base = readHeap(m.samples)
	m.peak = m.base
	m.sampler.Add(1)
	go func() {
		defer m.sampler.Done()
		own := make([]metrics.Sample, len(m.samples))
		copy(own, m.samples)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			m.peak = max(m.peak, readHeap(own))
			select {
			case <-m.stopping:
				return
			case <-tick.C:
			}
		}
	}()
	m.nodeCPU = nodesCPU(m.nodes)
	m.cpu = processCPU()
	m.start = time.Now()
	return m
}

// nodesCPU returns the CPU time the processes pids have used together.
func nodesCPU(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		c, _ := peertest.ProcessCPU(pid)
		total += c
	}
	return total
}

// stop ends the measured run and returns its cost.
func (m *meter) stop() Cost {
	wall := time.Since(m.start)
	cpu := processCPU() - m.cpu
	nodeCPU := nodesCPU(m.nodes) - m.nodeCPU
	close(m.stopping)
	m.sampler.Wait()
	c := Cost{Wall: wall, CPU: cpu, NodeCPU: nodeCPU, PeakHeap: max(m.peak, readHeap(m.samples)) - m.base}
	if rss, ok := peertest.PeakRSS(); ok && m.rssOK && rss > m.rss0 {
		c.PeakRSS = rss - m.rss0
	}
	return c
}

// cpuSample is the CPU time processes had used at a moment.
type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// cpuTrace samples the CPU time of processes (the nodes) every few
// milliseconds while it runs, so that their CPU can be told apart by
// the spans of a scan it covered (between). /proc counts CPU time in
// ticks of 10 ms: a span's figure is that coarse, and best read as a
// median over rounds.
type cpuTrace struct {
	pids     []int
	stopping chan struct{}
	done     chan struct{}
	samples  []cpuSample // in time order; read after stop
}

// startCPUTrace starts sampling the CPU time of pids every interval.
func startCPUTrace(pids []int, every time.Duration) *cpuTrace {
	t := &cpuTrace{pids: pids, stopping: make(chan struct{}), done: make(chan struct{})}
	t.samples = append(t.samples, cpuSample{time.Now(), nodesCPU(pids)})
	go func() {
		defer close(t.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.stopping:
				t.samples = append(t.samples, cpuSample{time.Now(), nodesCPU(t.pids)})
				return
			case <-tick.C:
				t.samples = append(t.samples, cpuSample{time.Now(), nodesCPU(t.pids)})
			}
		}
	}()
	return t
}

// stop ends the sampling.
func (t *cpuTrace) stop() {
	close(t.stopping)
	<-t.done
}

// at returns the CPU time of the last sample at or before moment, or of
// the first sample when moment precedes them all.
func (t *cpuTrace) at(moment time.Time) time.Duration {
	i, _ := slices.BinarySearchFunc(t.samples, moment, func(s cpuSample, m time.Time) int {
		if s.at.After(m) {
			return 1
		}
		return -1
	})
	return t.samples[max(0, i-1)].cpu
}

// between returns the CPU time the processes used from one moment to
// another, as the samples bracket them.
func (t *cpuTrace) between(from, to time.Time) time.Duration {
	return t.at(to) - t.at(from)
}
