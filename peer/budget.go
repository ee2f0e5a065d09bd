package peer

import (
	"fmt"
	"time"
)

// kind is a class of unsolicited messages with a budget of its own.
type kind int

const (
	kindPing     kind = iota
	kindInv           // inv, counted by entries
	kindNotFound      // notfound outside a request, by entries
	kindAddr          // addr and addrv2, by addresses
	kindGetData       // getdata, by entries
	kindHeaders       // headers outside a request
	kindReject        // reject
	kindData          // tx, block, merkleblock, cfilter, cfheaders, cfcheckpt outside a request
	kindOther         // known commands a light client has no use for
	kindUnknown       // commands btcd's wire does not know
	numKinds
)

// allowance is a token bucket's size and refill rate: burst units at
// once, then rate units a second.
type allowance struct {
	name  string // the messages, as an error names them
	unit  string // what is counted
	burst float64
	rate  float64
}

// allowances are the budgets of unsolicited traffic per peer, chosen far
// above what an honest node sends (the package documentation gives the
// reasons).
var allowances = [numKinds]allowance{
	kindPing:     {"ping", "messages", 20, 1},
	kindInv:      {"inv", "entries", 5000, 1000},
	kindNotFound: {"notfound", "entries", 1000, 100},
	kindAddr:     {"addr", "addresses", 2000, 10},
	kindGetData:  {"getdata", "entries", 1000, 100},
	kindHeaders:  {"headers", "messages", 100, 1},
	kindReject:   {"reject", "messages", 100, 10},
	kindData:     {"unrequested data", "messages", 100, 10},
	kindOther:    {"unexpected", "messages", 100, 1},
	kindUnknown:  {"unknown-command", "messages", 100, 1},
}

// byteAllowance bounds the bytes of all unsolicited messages together.
var byteAllowance = allowance{"", "bytes", 4e6, 1e6}

// bucket is a token bucket. It also keeps how much was taken since it was
// last full, to name the rate of a flood.
type bucket struct {
	tokens float64
	last   time.Time
	full   time.Time // when the bucket was last full
	spent  float64   // units taken since full
}

// take takes units from b at now; it fails when b holds fewer.
func (b *bucket) take(a *allowance, units float64, now time.Time) error {
	if b.last.IsZero() {
		b.tokens, b.last = a.burst, now
	}
	b.tokens = min(a.burst, b.tokens+now.Sub(b.last).Seconds()*a.rate)
	b.last = now
	if b.tokens >= a.burst {
		b.full, b.spent = now, 0
	}
	b.spent += units
	if units > b.tokens {
		return a.exceeded(b.spent, now.Sub(b.full))
	}
	b.tokens -= units
	return nil
}

// exceeded describes a spent budget: how much came, how fast, and what
// the budget allows.
func (a *allowance) exceeded(spent float64, in time.Duration) error {
	rate := "at once"
	if in > 0 {
		rate = a.amount(spent/in.Seconds()) + "/s"
	}
	return fmt.Errorf("%w: %s in %v (%s), over the budget of %s at once and %s/s",
		ErrFlooding, a.what(spent), in.Round(time.Millisecond), rate, a.amount(a.burst), a.amount(a.rate))
}

// what names an amount of what a counts.
func (a *allowance) what(n float64) string {
	if a.unit == "bytes" {
		return a.amount(n) + " of unsolicited messages"
	}
	return fmt.Sprintf("%.0f unsolicited %s %s", n, a.name, a.unit)
}

// amount formats a number of units, bytes in kB or MB.
func (a *allowance) amount(n float64) string {
	switch {
	case a.unit != "bytes" || n < 1e3:
		return fmt.Sprintf("%.0f", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f kB", n/1e3)
	}
	return fmt.Sprintf("%.1f MB", n/1e6)
}

// budget is a connection's budgets of unsolicited traffic; only its read
// loop uses it.
type budget struct {
	kinds [numKinds]bucket
	bytes bucket
}

// charge takes units of kind k and size bytes from the budgets.
func (b *budget) charge(k kind, units, size int, now time.Time) error {
	if err := b.kinds[k].take(&allowances[k], float64(max(units, 1)), now); err != nil {
		return err
	}
	if err := b.bytes.take(&byteAllowance, float64(size), now); err != nil {
		return fmt.Errorf("%w; last message: %s", err, allowances[k].name)
	}
	return nil
}
