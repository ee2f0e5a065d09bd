package simulate

// Validate checks the options as Generate does, without generating: it
// returns an ErrBadOptions (a *model.FieldError naming the field, for a
// rule of one field) for options out of range, so that a caller can refuse
// them before it prepares anything else.
func (o Options) Validate() error { return o.validate() }
