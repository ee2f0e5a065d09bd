package model

import (
	"testing"
)

func TestMonteCarloAgreesWithModel(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"one filter", Params{Addresses: 40, FPRate: 0.01, UniverseSize: 1_000_000, ElementsPerAddress: 2, ExtraElements: 20}},
		{"two filters", Params{Addresses: 40, FPRate: 0.05, UniverseSize: 1_000_000, ElementsPerAddress: 2, Filters: 2}},
		{"pair test", Params{Addresses: 30, FPRate: 0.05, UniverseSize: 1_000_000, ElementsPerAddress: 2, PairTest: true}},
		{"bitcoinj-like", Params{Addresses: 100, FPRate: 0.0005, UniverseSize: 10_000_000, ElementsPerAddress: 2, ExtraElements: 100}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := MonteCarlo(tt.p, MonteCarloOptions{Trials: 20, Sample: 100_000, Seed: uint64(i) + 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.WalletMissed != 0 {
				t.Fatalf("%d wallet elements missed", r.WalletMissed)
			}
			if r.FalsePositivesSeen == 0 {
				t.Fatalf("no false positive seen: the case cannot test agreement")
			}
			if !r.Agrees {
				t.Errorf("model S=%g outside the 99%% interval [%g, %g] of the measured mean %g",
					r.ModelFalsePositives, r.CILow, r.CIHigh, r.MeanFalsePositives)
			}
			// The interval must be informative: narrower than the mean.
			if r.CIHigh-r.CILow > r.MeanFalsePositives {
				t.Errorf("interval [%g, %g] too wide to test anything", r.CILow, r.CIHigh)
			}
		})
	}
}

// TestMonteCarloDetectsWrongModel shows the agreement check can fail: the
// measured rate of a filter sized for 0.01 does not agree with the model of
// one sized for 0.02.
func TestMonteCarloDetectsWrongModel(t *testing.T) {
	p := Params{Addresses: 40, FPRate: 0.01, UniverseSize: 1_000_000, ElementsPerAddress: 2}
	r, err := MonteCarlo(p, MonteCarloOptions{Trials: 20, Sample: 100_000, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	p.FPRate = 0.02
	wrong, err := Evaluate(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.CILow <= wrong.ExpectedFalsePositives && wrong.ExpectedFalsePositives <= r.CIHigh {
		t.Fatalf("interval [%g, %g] also contains the wrong model's %g", r.CILow, r.CIHigh, wrong.ExpectedFalsePositives)
	}
}

func TestMonteCarloErrors(t *testing.T) {
	p := DefaultParams()
	if _, err := MonteCarlo(p, MonteCarloOptions{Trials: 1}); err == nil {
		t.Error("1 trial accepted")
	}
	p.UniverseSize = uint64(p.Addresses)
	if _, err := MonteCarlo(p, MonteCarloOptions{Trials: 5}); err == nil {
		t.Error("empty outside universe accepted")
	}
}
