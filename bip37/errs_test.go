package bip37

import "errors"

// errorIs is errors.Is that also accepts want == nil for "no error".
func errorIs(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}
