package deadletter

import "errors"

// ErrPoison wraps every reason a stream record can never be handled by a
// consumer (an undecodable image, an unknown type, invalid data). Poison
// records go to the consumer's Sink instead of blocking the shard. It has
// no package prefix: a consumer wraps it with its own name, as in
// fmt.Errorf("projector: %w: %w", ErrPoison, cause), which reads
// "projector: poison record: ...".
var ErrPoison = errors.New("poison record")
