package reconcile

import "errors"

// ErrInvalid is wrapped by the errors of Config.Validate and
// Options.Validate.
var ErrInvalid = errors.New("reconcile: invalid configuration")
