package bip37

import "errors"

// Sentinel errors of the filter half of the package. Callers test for them
// with errors.Is; the errors returned wrap them with details.
var (
	// ErrFilterTooLarge reports a filter bit array longer than
	// MaxFilterSize bytes.
	ErrFilterTooLarge = errors.New("filter larger than 36000 bytes")

	// ErrTooManyHashFuncs reports more than MaxHashFuncs hash functions.
	ErrTooManyHashFuncs = errors.New("more than 50 hash functions")

	// ErrFilterAddTooLarge reports a filteradd element longer than
	// MaxFilterAddDataSize bytes.
	ErrFilterAddTooLarge = errors.New("filteradd element larger than 520 bytes")

	// ErrBadUpdateFlags reports an update flags name other than "none",
	// "all" and "p2pubkey-only" (ParseFlags). Decoders accept any flags
	// byte, as Core does.
	ErrBadUpdateFlags = errors.New("unknown filter update flags")

	// ErrTruncated reports a payload that ends before its last field.
	ErrTruncated = errors.New("payload truncated")

	// ErrTrailingData reports bytes left over after a complete payload.
	ErrTrailingData = errors.New("trailing data after payload")
)

// ErrNonCanonicalSize reports a CompactSize integer not in its shortest
// encoding, which Bitcoin Core and btcd reject.
var ErrNonCanonicalSize = errors.New("non-canonical CompactSize")
