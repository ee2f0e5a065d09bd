package simulate

import (
	"errors"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestValidate: Validate refuses what Generate refuses, naming the field,
// and passes the defaults.
func TestValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	o := DefaultOptions()
	o.Wallets = -1
	var fe *model.FieldError
	if err := o.Validate(); !errors.Is(err, ErrBadOptions) || !errors.As(err, &fe) || fe.Field != "wallet_count" {
		t.Fatalf("wallets -1: %v", err)
	}
	if _, err := Generate(o); err == nil || err.Error() != o.Validate().Error() {
		t.Fatalf("Generate: %v, Validate: %v", err, o.Validate())
	}
}
