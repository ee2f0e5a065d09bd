package chain

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// realBits is the difficulty of the easy test networks' genesis blocks: four
// times harder than their limit, so that the minimum-difficulty exception
// is visible.
const realBits = 0x201fffff

// easyParams copies base (keeping its network magic, and so BIP94) with
// regtest's limit, a retarget every 10 blocks of 10 minutes and a genesis
// block at realBits, so headers can be mined in tests.
func easyParams(base *chaincfg.Params) *chaincfg.Params {
	p := *base
	p.PowLimit = chaincfg.RegressionNetParams.PowLimit
	p.PowLimitBits = chaincfg.RegressionNetParams.PowLimitBits
	p.TargetTimePerBlock = 10 * time.Minute
	p.TargetTimespan = 100 * time.Minute
	p.MinDiffReductionTime = 20 * time.Minute
	p.Checkpoints = nil
	p.GenesisBlock = &wire.MsgBlock{Header: chaincfg.RegressionNetParams.GenesisBlock.Header}
	p.GenesisBlock.Header.Bits = realBits
	return &p
}

// step is one block of a test chain: its time after its parent and
// whether it takes the minimum-difficulty exception (limit) or the bits
// the rules demand otherwise.
type step struct {
	gap   time.Duration
	limit bool
}

// fast and slow are steps on and well past the 10-minute schedule.
var (
	fast = step{gap: 10 * time.Minute}
	slow = step{gap: 30 * time.Minute, limit: true}
)

// steps returns n copies of s.
func steps(n int, s step) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// build mines a chain on params following the steps.
func build(t testing.TB, params *chaincfg.Params, path []step) *Chain {
	t.Helper()
	c := New(params)
	for i, s := range path {
		ts := c.Header(c.Height()).Timestamp.Add(s.gap)
		bits := c.requiredBits(c.Height()+1, ts)
		if s.limit {
			bits = params.PowLimitBits
		}
		if err := extend(c, []*wire.BlockHeader{mine(t, c, bits, s.gap)}); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	return c
}

// scaledBits returns bits whose target is num/den times that of bits,
// rounded down as the retarget does.
func scaledBits(bits uint32, num, den int64) uint32 {
	v := new(big.Int).Mul(blockchain.CompactToBig(bits), big.NewInt(num))
	return blockchain.BigToCompact(v.Div(v, big.NewInt(den)))
}

func TestMinimumDifficultyRule(t *testing.T) {
	testnet3 := easyParams(&chaincfg.TestNet3Params)
	testnet4 := easyParams(&TestNet4Params)
	limit := testnet3.PowLimitBits
	// A last block at the limit, 10 minutes late: the period took 110
	// minutes of 100.
	lateLast := append(steps(8, fast), slow)
	onTime := scaledBits(realBits, 90, 100)
	tests := []struct {
		name    string
		params  *chaincfg.Params
		path    []step
		bits    uint32
		gap     time.Duration
		wantErr string
	}{
		{"on time keeps the difficulty", testnet3, steps(3, fast), realBits, 10 * time.Minute, ""},
		{"on time at the limit", testnet3, steps(3, fast), limit, 10 * time.Minute, "require 201fffff"},
		{"past 20 minutes at the limit", testnet3, steps(3, fast), limit, 20*time.Minute + time.Second, ""},
		{"past 20 minutes must use the limit", testnet3, steps(3, fast), realBits, 20*time.Minute + time.Second, "require 207fffff"},
		{"exactly 20 minutes is not late", testnet3, steps(3, fast), limit, 20 * time.Minute, "require 201fffff"},
		// After blocks at the limit, the last other one sets the bits.
		{"after limit blocks the difficulty returns", testnet3, []step{fast, slow, slow}, realBits, time.Minute, ""},
		{"after limit blocks no limit on time", testnet3, []step{fast, slow, slow}, limit, time.Minute, "require 201fffff"},
		{"limit blocks from the genesis block", testnet3, []step{slow, slow}, realBits, time.Minute, ""},
		// The first block of a period never takes the exception.
		// Nine 10-minute gaps of a 100-minute span: the target drops
		// to 90%.
		{"retarget ignores a late first block", testnet3, steps(9, fast), onTime, time.Hour, ""},
		{"retarget block at the limit", testnet3, steps(9, fast), limit, time.Hour, "network rules require"},
		// testnet3 retargets from the last block's bits: at the limit,
		// the next period starts at the limit (the block-storm bug).
		{"testnet3 retarget from a limit block", testnet3, lateLast, limit, time.Minute, ""},
		{"testnet3 period stuck at the limit", testnet3, append(lateLast, fast), limit, time.Minute, ""},
		// BIP 94 retargets from the first block's bits.
		{"testnet4 retarget from the first block", testnet4, lateLast, scaledBits(realBits, 110, 100), time.Minute, ""},
		{"testnet4 retarget not from the last", testnet4, lateLast, limit, time.Minute, "network rules require"},
		{"testnet4 period after the retarget", testnet4, append(lateLast, fast), scaledBits(realBits, 110, 100), time.Minute, ""},
		{"testnet4 keeps the 20-minute rule", testnet4, steps(3, fast), limit, 21 * time.Minute, ""},
		{"testnet4 on time at the limit", testnet4, steps(3, fast), limit, time.Minute, "require 201fffff"},
		// BIP 94's time-warp rule, only at a retarget.
		{"time warp of 600 s allowed", testnet4, steps(9, fast), onTime, -600 * time.Second, ""},
		{"time warp of 601 s refused", testnet4, steps(9, fast), onTime, -601 * time.Second, "time-warp"},
		{"time warp within a period allowed", testnet4, steps(5, fast), realBits, -601 * time.Second, ""},
		{"no time-warp rule on testnet3", testnet3, steps(9, fast), onTime, -601 * time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := build(t, tt.params, tt.path)
			err := extend(c, []*wire.BlockHeader{mine(t, c, tt.bits, tt.gap)})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Height() != int32(len(tt.path))+1 {
					t.Fatalf("height %d after extend", c.Height())
				}
				return
			}
			if !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestVersionRule(t *testing.T) {
	params := easyParams(&TestNet4Params) // BIP 34, 65 and 66 from block 1
	for _, tt := range []struct {
		version int32
		ok      bool
	}{{1, false}, {2, false}, {3, false}, {4, true}, {0x20000000, true}} {
		c := New(params)
		h := mine(t, c, realBits, time.Minute)
		h.Version = tt.version
		for h.Nonce = 0; !powOK(h); h.Nonce++ {
		}
		err := extend(c, []*wire.BlockHeader{h})
		if (err == nil) != tt.ok || (err != nil && !strings.Contains(err.Error(), "version")) {
			t.Errorf("version %d: %v", tt.version, err)
		}
	}
}

func powOK(h *wire.BlockHeader) bool {
	hash := h.BlockHash()
	return blockchain.HashToBig(&hash).Cmp(blockchain.CompactToBig(h.Bits)) <= 0
}

// btcdNode shows a block of a Chain to btcd's blockchain package.
type btcdNode struct {
	c *Chain
	h int32
}

func (n btcdNode) Height() int32                { return n.h }
func (n btcdNode) Bits() uint32                 { return n.c.headers[n.h].Bits }
func (n btcdNode) Timestamp() int64             { return n.c.headers[n.h].Timestamp.Unix() }
func (n btcdNode) Parent() blockchain.HeaderCtx { return n.RelativeAncestorCtx(1) }
func (n btcdNode) RelativeAncestorCtx(d int32) blockchain.HeaderCtx {
	if d < 0 || d > n.h {
		return nil
	}
	return btcdNode{n.c, n.h - d}
}

// btcdParams gives btcd the retarget figures it derives from params.
type btcdParams struct{ p *chaincfg.Params }

func (b btcdParams) ChainParams() *chaincfg.Params { return b.p }
func (b btcdParams) BlocksPerRetarget() int32      { return retargetInterval(b.p) }
func (b btcdParams) MinRetargetTimespan() int64 {
	return int64(b.p.TargetTimespan/time.Second) / b.p.RetargetAdjustmentFactor
}
func (b btcdParams) MaxRetargetTimespan() int64 {
	return int64(b.p.TargetTimespan/time.Second) * b.p.RetargetAdjustmentFactor
}
func (b btcdParams) VerifyCheckpoint(int32, *chainhash.Hash) bool          { return true }
func (b btcdParams) FindPreviousCheckpoint() (blockchain.HeaderCtx, error) { return nil, nil }

// bip94Tip is a tip whose bits read as those of the first block of its
// period: btcd's retarget from it is BIP 94's.
type bip94Tip struct {
	btcdNode
	first uint32
}

func (n bip94Tip) Bits() uint32 { return n.first }

// btcdAccepts returns the verdict of btcd's own contextual header check
// (blockchain.CheckBlockHeaderContext: required difficulty, median time
// past, version) on h on top of c's tip. btcd knows no BIP 94; at a
// testnet4 retarget it is shown the period's first bits in place of the
// last, which turns its retarget into BIP 94's.
func btcdAccepts(c *Chain, h *wire.BlockHeader) error {
	var tip blockchain.HeaderCtx = btcdNode{c, c.Height()}
	interval := retargetInterval(c.params)
	if next := c.Height() + 1; BIP94(c.params) && next%interval == 0 {
		tip = bip94Tip{btcdNode{c, c.Height()}, c.headers[next-interval].Bits}
	}
	return blockchain.CheckBlockHeaderContext(h, tip, blockchain.BFNone, btcdParams{c.params}, true)
}

// TestDifficultyAgainstBtcd grows chains with random block times and at
// every height checks that the bits Chain demands are the ones btcd's
// blockchain package demands (it rejects any other), and that both agree
// on the median time past.
func TestDifficultyAgainstBtcd(t *testing.T) {
	minute := time.Minute
	tests := []struct {
		name   string
		params *chaincfg.Params
		blocks int
		gaps   []time.Duration
	}{
		// simnet as btcd defines it: the limit is its genesis
		// difficulty, so the first retarget (at 2016, after fast
		// blocks) raises it and the exception then shows.
		{"simnet", &chaincfg.SimNetParams, 2100, []time.Duration{minute, 2 * minute, 5 * minute, 20 * minute, 20*minute + time.Second, 45 * minute}},
		{"testnet3 rules", easyParams(&chaincfg.TestNet3Params), 400, []time.Duration{-5 * minute, minute, minute, 5 * minute, 10 * minute, 20 * minute, 21 * minute, 25 * minute}},
		{"testnet4 rules", easyParams(&TestNet4Params), 400, []time.Duration{-5 * minute, minute, minute, 5 * minute, 10 * minute, 20 * minute, 21 * minute, 25 * minute}},
		{"mainnet rules", easyParams(&chaincfg.MainNetParams), 300, []time.Duration{-5 * minute, minute, 5 * minute, 10 * minute, 15 * minute, 21 * minute, 30 * minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.name))))
			c := New(tt.params)
			c.Now = func() time.Time { return time.Unix(1<<32, 0) }
			limitBlocks, refused := 0, 0
			distinct := map[uint32]bool{}
			for c.Height() < int32(tt.blocks) {
				gap := tt.gaps[rng.IntN(len(tt.gaps))]
				// simnet's first period must be fast to raise its
				// difficulty.
				if tt.params == &chaincfg.SimNetParams && c.Height() < 2016 {
					gap = minute
				}
				ts := c.Header(c.Height()).Timestamp.Add(gap)
				if !ts.After(c.medianTime(c.Height())) {
					continue
				}
				if BIP94(tt.params) && (c.Height()+1)%retargetInterval(tt.params) == 0 && gap < -MaxTimeWarp {
					continue
				}
				want := c.requiredBits(c.Height()+1, ts)
				h := mine(t, c, want, gap)
				if err := btcdAccepts(c, h); err != nil {
					t.Fatalf("height %d: btcd refuses bits %08x: %v", c.Height()+1, want, err)
				}
				if got, want := c.medianTime(c.Height()), blockchain.CalcPastMedianTime(btcdNode{c, c.Height()}); !got.Equal(want) {
					t.Fatalf("height %d: median time %v, btcd %v", c.Height(), got, want)
				}
				// The other choice is refused by both.
				other := tt.params.PowLimitBits
				if want == other {
					other = c.lastNormalBits(c.Height())
				}
				if other != want {
					alt := mine(t, c, other, gap)
					var rerr blockchain.RuleError
					if err := btcdAccepts(c, alt); !errors.As(err, &rerr) || rerr.ErrorCode != blockchain.ErrUnexpectedDifficulty {
						t.Fatalf("height %d: btcd on bits %08x: %v", c.Height()+1, other, err)
					}
					if err := extend(c, []*wire.BlockHeader{alt}); !errors.Is(err, ErrBadHeader) {
						t.Fatalf("height %d: bits %08x accepted, want %08x", c.Height()+1, other, want)
					}
					refused++
				}
				if err := extend(c, []*wire.BlockHeader{h}); err != nil {
					t.Fatal(err)
				}
				if want == tt.params.PowLimitBits {
					limitBlocks++
				}
				distinct[want] = true
			}
			t.Logf("%d blocks, %d at the limit, %d difficulties, %d other bits refused", tt.blocks, limitBlocks, len(distinct), refused)
			// The walk must have met both kinds of block and moved
			// the difficulty.
			if tt.params.ReduceMinDifficulty && (limitBlocks == 0 || limitBlocks == tt.blocks) {
				t.Fatalf("%d of %d blocks at the limit: the exception was not exercised", limitBlocks, tt.blocks)
			}
			retargets := tt.blocks / int(retargetInterval(tt.params))
			if len(distinct) < min(3, retargets+1) || refused == 0 {
				t.Fatalf("%d difficulties, %d refusals: the retarget was not exercised", len(distinct), refused)
			}
		})
	}
}

// TestRetargetVectors: Bitcoin Core's retarget vectors from real mainnet
// blocks (src/test/pow_tests.cpp: get_next_work, get_next_work_pow_limit,
// get_next_work_lower_limit_actual, get_next_work_upper_limit_actual).
// Under BIP 94 the same figures must come out when only the period's first
// block carries the bits and its last took the minimum-difficulty
// exception; under testnet3's rules that last block sets the base.
func TestRetargetVectors(t *testing.T) {
	vectors := []struct {
		name        string
		first, last int64 // timestamps of the period's first and last blocks
		bits, want  uint32
	}{
		{"no clamp", 1261130161, 1262152739, 0x1d00ffff, 0x1d00d86a},
		{"limit", 1231006505, 1233061996, 0x1d00ffff, 0x1d00ffff},
		{"fastest", 1279008237, 1279297671, 0x1c05a3f4, 0x1c0168fd},
		{"slowest", 1263163443, 1269211443, 0x1c387f6f, 0x1d00e1fd},
	}
	// period returns a chain whose blocks 0 and 2015 have the given
	// times and bits, for requiredBits at the retarget height 2016.
	period := func(params *chaincfg.Params, first, last int64, firstBits, lastBits uint32) *Chain {
		c := &Chain{params: params, span: span{headers: make([]wire.BlockHeader, 2016)}}
		c.headers[0] = wire.BlockHeader{Timestamp: time.Unix(first, 0), Bits: firstBits}
		c.headers[2015] = wire.BlockHeader{Timestamp: time.Unix(last, 0), Bits: lastBits}
		return c
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			ts := time.Unix(v.last+600, 0)
			if got := period(&chaincfg.MainNetParams, v.first, v.last, v.bits, v.bits).requiredBits(2016, ts); got != v.want {
				t.Errorf("mainnet: %08x, want %08x", got, v.want)
			}
			limit := TestNet4Params.PowLimitBits
			if got := period(&TestNet4Params, v.first, v.last, v.bits, limit).requiredBits(2016, ts); got != v.want {
				t.Errorf("testnet4: %08x, want %08x", got, v.want)
			}
			// testnet3 scales the last block's bits, the limit.
			got := period(&chaincfg.TestNet3Params, v.first, v.last, v.bits, limit).requiredBits(2016, ts)
			want := period(&chaincfg.MainNetParams, v.first, v.last, limit, limit).requiredBits(2016, ts)
			if got != want || (v.bits != limit && got == v.want) {
				t.Errorf("testnet3: %08x, want %08x (from the last block)", got, want)
			}
		})
	}
}
