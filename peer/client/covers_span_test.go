package client

import (
	"math"
	"testing"
)

func TestChainPlace(t *testing.T) {
	cs := &coverScan{from: 100, to: 200}
	tests := []struct {
		name string
		at   []int32
		want chainPlace
	}{
		{"none", nil, chainPlace{}},
		{"one block", []int32{150}, chainPlace{blocks: 1, span: 0, mean: 0.5}},
		{"across the range", []int32{100, 200, 150}, chainPlace{blocks: 3, span: 1, mean: 0.5}},
		{"capped blocks", []int32{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, chainPlace{blocks: maxAskedBlocks, span: 0.09, mean: 0.045}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := map[int32]bool{}
			for _, h := range tt.at {
				hs[h] = true
			}
			got := cs.placeOf(hs)
			if got.blocks != tt.want.blocks || math.Abs(got.span-tt.want.span) > 1e-9 || math.Abs(got.mean-tt.want.mean) > 1e-9 {
				t.Fatalf("placeOf(%v) = %+v, want %+v", tt.at, got, tt.want)
			}
		})
	}
}

func TestChainPlaceLies(t *testing.T) {
	w := chainPlace{blocks: 3, span: 0.7, mean: 0.4}
	tests := []struct {
		name string
		c    chainPlace
		want bool
	}{
		{"same", w, true},
		{"span at the tolerance", chainPlace{3, 0.7 - spanTolerance + 1e-9, 0.4}, true},
		{"span beyond", chainPlace{3, 0.5, 0.4}, false},
		{"mean beyond", chainPlace{3, 0.7, 0.55}, false},
		{"other length", chainPlace{2, 0.7, 0.4}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.lies(w); got != tt.want {
				t.Fatalf("%+v lies like %+v: %v, want %v", tt.c, w, got, tt.want)
			}
		})
	}
}

func TestSpanScore(t *testing.T) {
	tests := []struct {
		name           string
		wallet, covers []float64
		wk, ck         []int
		want           float64
	}{
		{"alike", []float64{0.7, 0.2}, []float64{0.7, 0.2}, []int{3, 2}, []int{3, 2}, 0},
		{"every cover below", []float64{0.7, 0.7}, []float64{0.5, 0.4}, []int{3, 3}, []int{3, 3}, 0.5},
		{"below within one key only", []float64{0.7, 0.2}, []float64{0.5, 0.2}, []int{3, 2}, []int{3, 2}, 0.25},
		{"across keys not compared", []float64{0.7}, []float64{0.1}, []int{3}, []int{2}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spanScore(tt.wallet, tt.covers, tt.wk, tt.ck); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("spanScore = %v, want %v", got, tt.want)
			}
		})
	}
}
