package streamimage

import (
	"errors"
	"strconv"
	"strings"
)

// MaxDepth is the deepest nesting level accepted, DynamoDB's own limit. A
// top-level attribute is at level 1 and an element of an M or L at level d is
// at level d+1, so a leaf may sit inside at most MaxDepth-1 maps or lists.
const MaxDepth = 32

var (
	// ErrUnsupportedType reports a value that is not one of the ten DynamoDB
	// types: an UnknownUnionMember of either SDK union, a Go type that
	// implements neither known member, or an events.DynamoDBAttributeValue
	// whose DataType is not one of the documented constants.
	ErrUnsupportedType = errors.New("unsupported attribute value type")

	// ErrNilValue reports a missing value: a nil types.AttributeValue or
	// streamtypes.AttributeValue interface, a typed nil member pointer such as
	// (*types.AttributeValueMemberS)(nil), or the zero
	// events.DynamoDBAttributeValue (which reports DataTypeBinary but holds no
	// value at all).
	ErrNilValue = errors.New("nil attribute value")

	// ErrTooDeep reports a value nested deeper than MaxDepth levels.
	ErrTooDeep = errors.New("attribute value nested too deeply")

	// ErrInvalidNull reports a NULL member whose Value is false. DynamoDB only
	// ever uses NULL: true and Lambda's representation cannot express false,
	// so ToLambda and ToLambdaValue refuse it rather than change its meaning.
	ErrInvalidNull = errors.New("NULL attribute value must be true")

	// ErrNoStreamRecord reports a GetRecords record whose Dynamodb field is
	// nil.
	ErrNoStreamRecord = errors.New("streamimage: record has no dynamodb stream record")
)

// PathError records a conversion failure and the attribute path where it
// happened. Path is written the way DynamoDB document paths are: map keys are
// joined with dots and list elements use brackets, e.g. `data.items[2]`. Path
// is empty when the failing value is the one passed to a *Value function
// (or is a top-level attribute whose name is empty).
// Map keys are written verbatim, even when they contain dots or brackets.
type PathError struct {
	Path string
	Err  error
}

// Error returns e.g.
// `streamimage: attribute "data.items[2]": unsupported attribute value type`,
// always in that form.
func (e *PathError) Error() string {
	return "streamimage: attribute " + strconv.Quote(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the underlying sentinel error.
func (e *PathError) Unwrap() error { return e.Err }

// path is a lazily rendered attribute path: a linked list from leaf to root,
// built on the stack during recursion and turned into a string only when an
// error is reported.
type path struct {
	parent *path
	key    string
	index  int
	isIdx  bool
}

func (p *path) child(key string) path { return path{parent: p, key: key} }
func (p *path) elem(i int) path       { return path{parent: p, index: i, isIdx: true} }

func (p *path) String() string {
	var elems []*path
	for q := p; q != nil; q = q.parent {
		elems = append(elems, q)
	}
	var b strings.Builder
	for i := len(elems) - 1; i >= 0; i-- {
		q := elems[i]
		if q.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(q.index))
			b.WriteByte(']')
			continue
		}
		if i != len(elems)-1 {
			b.WriteByte('.')
		}
		b.WriteString(q.key)
	}
	return b.String()
}

func pathErr(p *path, err error) error {
	return &PathError{Path: p.String(), Err: err}
}
