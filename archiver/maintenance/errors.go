package maintenance

import "errors"

// ErrUnknownTask: the event names a task this package does not run.
var ErrUnknownTask = errors.New("maintenance: unknown task")
