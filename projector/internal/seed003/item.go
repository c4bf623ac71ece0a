package seed003

import (
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is a DynamoDB item.
type Item = map[string]types.AttributeValue

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
func avBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// isoTime is the seed's timestamp format: ISO8601 with milliseconds.
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// changes lists what differs from prev to next as the seed's changes
// attribute: {field: {from, to}}, from absent (NULL) for a new attribute,
// to NULL for a removed one. The keys, the index keys, last_updated_at
// and ttl are not changes of the job: they follow from it.
func changes(prev, next Item) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	null := &types.AttributeValueMemberNULL{Value: true}
	for name, to := range next {
		if derived[name] {
			continue
		}
		from, ok := prev[name]
		if ok && reflect.DeepEqual(from, to) {
			continue
		}
		if !ok {
			from = null
		}
		out[name] = &types.AttributeValueMemberM{Value: Item{"from": from, "to": to}}
	}
	for name, from := range prev {
		if _, ok := next[name]; !ok && !derived[name] {
			out[name] = &types.AttributeValueMemberM{Value: Item{"from": from, "to": null}}
		}
	}
	return out
}

var derived = map[string]bool{
	attrPK: true, attrSK: true, gsi1PK: true, gsi2PK: true, gsi3PK: true,
	"last_updated_at": true, attrTTL: true, "updated_at": true,
}

// updateInput builds the UpdateItem that turns prev into next: SET of
// every attribute that is new or changed, REMOVE of every attribute next
// lacks, in name order; the key attributes never change. It returns nil
// when nothing differs.
func updateInput(table string, key Item, prev, next Item) *dynamodb.UpdateItemInput {
	var set, remove []string
	for name, v := range next {
		if _, isKey := key[name]; isKey {
			continue
		}
		if old, ok := prev[name]; !ok || !reflect.DeepEqual(old, v) {
			set = append(set, name)
		}
	}
	for name := range prev {
		if _, ok := next[name]; !ok {
			if _, isKey := key[name]; !isKey {
				remove = append(remove, name)
			}
		}
	}
	if len(set)+len(remove) == 0 {
		return nil
	}
	slices.Sort(set)
	slices.Sort(remove)
	names := map[string]string{}
	values := Item{}
	expr := ""
	for i, name := range set {
		if i == 0 {
			expr = "SET "
		} else {
			expr += ", "
		}
		n, v := "#s"+strconv.Itoa(i), ":s"+strconv.Itoa(i)
		names[n] = name
		values[v] = next[name]
		expr += n + " = " + v
	}
	for i, name := range remove {
		if i == 0 {
			if expr != "" {
				expr += " "
			}
			expr += "REMOVE "
		} else {
			expr += ", "
		}
		n := "#r" + strconv.Itoa(i)
		names[n] = name
		expr += n
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                aws.String(table),
		Key:                      key,
		UpdateExpression:         aws.String(expr),
		ExpressionAttributeNames: names,
	}
	if len(values) > 0 {
		in.ExpressionAttributeValues = values
	}
	return in
}
