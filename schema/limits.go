package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// DynamoDB's limits on what one item can hold. A write that breaks one
// fails with a ValidationException on every attempt, so an event that would
// produce such an item is refused at ingest (Validate, through CheckData
// and the field lengths below) and, should one reach the event table
// another way, quarantined by the projector before anything of it is
// committed (CheckItem). See docs/event-contract.md, "DynamoDB's limits".
const (
	// MaxNestingDepth is how deep maps and lists may nest in an item, the
	// item itself counting as level 1 (checked against DynamoDB Local: an
	// attribute's value holds at most 31 nested maps and lists). An
	// event's data object counts as level 1 too, so a message's payload,
	// data's level 2, is at the same level in data as in its item.
	MaxNestingDepth = 32
	// MaxNumberDigits is how many significant digits a number may have.
	MaxNumberDigits = 38
	// MaxNumberExponent and MinNumberExponent bound a non-zero number's
	// magnitude in scientific notation: 1E-130 <= |n| <= 9.99...E+125.
	MaxNumberExponent = 125
	MinNumberExponent = -130
	// MaxPartitionKeyBytes is the most UTF-8 bytes of a partition (hash)
	// key attribute, of the table or of a global secondary index.
	MaxPartitionKeyBytes = 2048
	// MaxSortKeyBytes is the most UTF-8 bytes of a sort (range) key
	// attribute, of the table or of a global secondary index.
	MaxSortKeyBytes = 1024
)

// Documented maximum lengths, in UTF-8 bytes, of the strings that feed keys
// of the event table, the aggregates table and the projections
// (docs/event-contract.md). Each is generous for what its producer sends,
// and small enough that every key built from it stays under
// MaxPartitionKeyBytes or MaxSortKeyBytes (TestLimitsThroughHTTP in package
// ingest projects events at these lengths into DynamoDB Local).
const (
	// MaxSubjectBytes bounds an event's subject: the partition key of the
	// event table and of the aggregates table.
	MaxSubjectBytes = MaxPartitionKeyBytes
	// MaxIDBytes bounds an event's id: the event table's sort key (and
	// MaxIDLength characters).
	MaxIDBytes = MaxSortKeyBytes
	// MaxARNBytes bounds a Step Functions executionArn and stateMachineArn
	// (AWS's own limit is 256 characters): the executions table's key is
	// the execution ARN, its AgentDateIndex key the state machine's name.
	MaxARNBytes = 1024
	// MaxRepoFullNameBytes bounds a GitHub "owner/name" (GitHub allows 39
	// + 1 + 100 characters): a key attribute of the workflow-jobs table's
	// GSI2.
	MaxRepoFullNameBytes = 512
	// MaxNameBytes bounds names that are copied into projection rows: a
	// Step Functions execution's name, a GitHub job's and workflow's name.
	MaxNameBytes = 1024
)

// IsRefusedByDynamoDB reports whether DynamoDB refused a request as invalid
// (error code ValidationException), by the error's code, never its text:
// a write that breaks one of DynamoDB's limits, which fails the same way on
// every attempt. The Appender and the projector treat it as permanent.
func IsRefusedByDynamoDB(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException"
}

// ErrLimit is matched (errors.Is) by every *LimitError: the input breaks one
// of DynamoDB's limits and can never be stored. It is permanent.
var ErrLimit = errors.New("schema: breaks a DynamoDB limit")

// Limit names one of DynamoDB's limits.
type Limit string

// The limits a LimitError can name.
const (
	LimitNesting      Limit = "nesting depth"
	LimitNumber       Limit = "number"
	LimitPartitionKey Limit = "partition key size"
	LimitSortKey      Limit = "sort key size"
	LimitLength       Limit = "length"
	LimitItemSize     Limit = "item size"
)

// LimitError says which field breaks which of DynamoDB's limits. Field is a
// JSON path from the envelope ("data.payload.a[3].b") for an event, or
// "<table>.<attribute path>" for an item (CheckItem). Rule says what the
// limit is and what the field holds. A *LimitError is the Err of the
// FieldError that Validate reports, so errors.As finds it through a
// *ValidationError.
type LimitError struct {
	Field string
	Limit Limit
	Rule  string
}

func (e *LimitError) Error() string { return e.Field + ": " + e.Rule }

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Permanent reports that the same input is never worth retrying.
func (e *LimitError) Permanent() bool { return true }

// fieldError is the FieldError Validate reports for a LimitError.
func (e *LimitError) fieldError() *FieldError {
	return &FieldError{Field: e.Field, Rule: e.Rule, Err: e}
}

// maxBytes records a LimitLength error when v is longer than n UTF-8 bytes.
func (c *checker) maxBytes(field, v string, n int) {
	if len(v) > n {
		c.errs = append(c.errs, (&LimitError{Field: c.path(field), Limit: LimitLength,
			Rule: fmt.Sprintf("must be at most %d bytes (streamfold's limit for this field), got %d", n, len(v))}).fieldError())
	}
}

// checkEnvelopeLimits records the envelope's keys over their limits.
func checkEnvelopeLimits(c *checker, e *Event) {
	if len(e.Subject) > MaxSubjectBytes {
		c.errs = append(c.errs, (&LimitError{Field: "subject", Limit: LimitPartitionKey,
			Rule: fmt.Sprintf("must be at most %d bytes (DynamoDB's partition key limit: the subject keys the event and aggregates tables), got %d", MaxSubjectBytes, len(e.Subject))}).fieldError())
	}
	if len(e.ID) > MaxIDBytes {
		c.errs = append(c.errs, (&LimitError{Field: "id", Limit: LimitSortKey,
			Rule: fmt.Sprintf("must be at most %d bytes (DynamoDB's sort key limit), got %d", MaxIDBytes, len(e.ID))}).fieldError())
	}
}

// CheckData checks JSON text (valid JSON, such as an event's data) against
// the limits its values meet once they are DynamoDB attributes: maps and
// lists nest at most MaxNestingDepth levels (the outermost value is level
// 1), and every number has at most MaxNumberDigits significant digits and
// a magnitude between 1E-130 and 9.99E+125 (or is zero). prefix starts
// each error's Field ("data"). It returns the first limit broken, nil when
// none is.
func CheckData(prefix string, raw []byte) *LimitError {
	var stack []frame
	for i := 0; i < len(raw); i++ {
		switch b := raw[i]; {
		case b == '"':
			end := stringEnd(raw, i)
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				stack[n-1].key = raw[i : end+1]
				stack[n-1].expectKey = false
			}
			i = end
		case b == '{' || b == '[':
			stack = append(stack, frame{object: b == '{', expectKey: b == '{', index: 0})
			if len(stack) > MaxNestingDepth {
				return &LimitError{Field: framePath(prefix, stack[:len(stack)-1]), Limit: LimitNesting,
					Rule: fmt.Sprintf("must nest at most %d levels of objects and arrays (DynamoDB's limit), got more", MaxNestingDepth)}
			}
		case (b == '}' || b == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		case b == ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].expectKey = true
				} else {
					stack[n-1].index++
				}
			}
		case b == '-' || b >= '0' && b <= '9':
			j := i + 1
			for j < len(raw) && isNumberByte(raw[j]) {
				j++
			}
			if rule := NumberProblem(string(raw[i:j])); rule != "" {
				return &LimitError{Field: framePath(prefix, stack), Limit: LimitNumber, Rule: rule}
			}
			i = j - 1
		}
	}
	return nil
}

// frame is one open object or array of CheckData's scan.
type frame struct {
	object, expectKey bool
	key               []byte // the current member's quoted key
	index             int    // the current element's index
}

// framePath renders the path of the value at the top of stack.
func framePath(prefix string, stack []frame) string {
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, f := range stack {
		if f.object {
			var k string
			if json.Unmarshal(f.key, &k) != nil {
				k = string(f.key)
			}
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(k)
		} else {
			sb.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return sb.String()
}

// stringEnd returns the index of the quote closing the string opened at i.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(raw) - 1
}

func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-'
}

// NumberProblem says why a decimal literal (JSON number syntax) cannot be a
// DynamoDB number, "" when it can: more than MaxNumberDigits significant
// digits, or a non-zero magnitude outside 1E-130 to 9.99E+125. Leading and
// trailing zeros are not significant (1E+100 and 100...0 are one digit).
func NumberProblem(lit string) string {
	s := strings.TrimLeft(lit, "+-")
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil { // beyond ±2^31: far outside either bound
			if strings.HasPrefix(s[i+1:], "-") {
				e = -1 << 31
			} else {
				e = 1 << 31
			}
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := int64(len(intPart)) + exp // value = 0.digits x 10^point
	for digits != "" && digits[0] == '0' {
		digits, point = digits[1:], point-1
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "" // zero
	}
	if len(digits) > MaxNumberDigits {
		return fmt.Sprintf("must have at most %d significant digits (DynamoDB's number limit), got %d", MaxNumberDigits, len(digits))
	}
	switch sci := point - 1; {
	case sci > MaxNumberExponent:
		return "must be at most 9.99E+125 in magnitude (DynamoDB's number limit), got " + truncate(lit, 40)
	case sci < MinNumberExponent:
		return "must be at least 1E-130 in magnitude, or 0 (DynamoDB's number limit), got " + truncate(lit, 40)
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CheckItem checks an item of a logical table (Tables) against DynamoDB's
// limits: its size (MaxItemBytes), the size of every key attribute of the
// table and of its global secondary indexes (MaxPartitionKeyBytes for hash
// attributes, MaxSortKeyBytes for range ones), the nesting of its maps and
// lists (MaxNestingDepth, the item at level 1, an attribute's own value at
// level 2) and every number. It returns the first *LimitError found (Field
// "<table>.<attribute path>"), nil for an item DynamoDB stores.
func CheckItem(table string, item map[string]types.AttributeValue) error {
	if spec, ok := TableSpec(table); ok {
		check := func(k KeyAttr, limit int, what Limit) *LimitError {
			v, ok := item[k.Name].(*types.AttributeValueMemberS)
			if !ok || len(v.Value) <= limit {
				return nil
			}
			return &LimitError{Field: table + "." + k.Name, Limit: what,
				Rule: fmt.Sprintf("must be at most %d bytes (DynamoDB's %s limit), got %d", limit, what, len(v.Value))}
		}
		hashes, ranges := []KeyAttr{spec.Hash}, []KeyAttr{}
		if spec.Range != nil {
			ranges = append(ranges, *spec.Range)
		}
		for _, ix := range spec.Indexes {
			hashes = append(hashes, ix.Hash...)
			ranges = append(ranges, ix.Range...)
		}
		for _, k := range hashes {
			if le := check(k, MaxPartitionKeyBytes, LimitPartitionKey); le != nil {
				return le
			}
		}
		for _, k := range ranges {
			if le := check(k, MaxSortKeyBytes, LimitSortKey); le != nil {
				return le
			}
		}
	}
	// The common case, an item within every limit, is decided without
	// building paths or sorting names; only a problem is looked for again
	// in name order, so that the error names the same field every time.
	ok := true
	for _, v := range item {
		if !valueOK(v, 2) { // the item is level 1
			ok = false
			break
		}
	}
	if !ok {
		for _, name := range sortedAttrNames(item) {
			if le := checkValue(table+"."+name, item[name], 2); le != nil {
				return le
			}
		}
	}
	if n := ItemSize(item); n > MaxItemBytes {
		return &LimitError{Field: table, Limit: LimitItemSize,
			Rule: fmt.Sprintf("item must be at most %d bytes (DynamoDB's 400 KB), got %d", MaxItemBytes, n)}
	}
	return nil
}

// checkValue checks one attribute value at nesting level depth.
func checkValue(path string, v types.AttributeValue, depth int) *LimitError {
	switch m := v.(type) {
	case *types.AttributeValueMemberN:
		if rule := NumberProblem(m.Value); rule != "" {
			return &LimitError{Field: path, Limit: LimitNumber, Rule: rule}
		}
	case *types.AttributeValueMemberNS:
		for i, s := range m.Value {
			if rule := NumberProblem(s); rule != "" {
				return &LimitError{Field: path + "[" + strconv.Itoa(i) + "]", Limit: LimitNumber, Rule: rule}
			}
		}
	case *types.AttributeValueMemberM, *types.AttributeValueMemberL:
		if depth > MaxNestingDepth {
			return &LimitError{Field: path, Limit: LimitNesting,
				Rule: fmt.Sprintf("must nest at most %d levels of maps and lists (DynamoDB's limit), got more", MaxNestingDepth)}
		}
		if mm, ok := m.(*types.AttributeValueMemberM); ok {
			for _, k := range sortedAttrNames(mm.Value) {
				if le := checkValue(path+"."+k, mm.Value[k], depth+1); le != nil {
					return le
				}
			}
			return nil
		}
		for i, e := range m.(*types.AttributeValueMemberL).Value {
			if le := checkValue(path+"["+strconv.Itoa(i)+"]", e, depth+1); le != nil {
				return le
			}
		}
	}
	return nil
}

// valueOK is checkValue's verdict without the path: true when v is within
// every limit checkValue checks.
func valueOK(v types.AttributeValue, depth int) bool {
	switch m := v.(type) {
	case *types.AttributeValueMemberN:
		return NumberProblem(m.Value) == ""
	case *types.AttributeValueMemberNS:
		for _, s := range m.Value {
			if NumberProblem(s) != "" {
				return false
			}
		}
	case *types.AttributeValueMemberM:
		if depth > MaxNestingDepth {
			return false
		}
		for _, e := range m.Value {
			if !valueOK(e, depth+1) {
				return false
			}
		}
	case *types.AttributeValueMemberL:
		if depth > MaxNestingDepth {
			return false
		}
		for _, e := range m.Value {
			if !valueOK(e, depth+1) {
				return false
			}
		}
	}
	return true
}

func sortedAttrNames(m map[string]types.AttributeValue) []string { return slices.Sorted(maps.Keys(m)) }
