package streamimage_test

import (
	"fmt"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema/streamimage"
)

func Example() {
	// A NewImage as a Lambda DynamoDB Streams event delivers it.
	img := map[string]events.DynamoDBAttributeValue{
		"id":     events.NewStringAttribute("01HZ3Q6V9X8K2M4N6P8R0T2V4X"),
		"amount": events.NewNumberAttribute("1e400"), // too big for a float64, kept as text
		"data": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
			"items": events.NewListAttribute([]events.DynamoDBAttributeValue{
				events.NewStringAttribute("a"),
				events.NewNullAttribute(),
			}),
		}),
	}
	item, err := streamimage.FromLambda(img)
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := make([]string, 0, len(item))
	for k := range item {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("%s: %T\n", k, item[k])
	}
	fmt.Println("amount =", item["amount"].(*types.AttributeValueMemberN).Value)

	// Errors name the attribute path.
	item["data"].(*types.AttributeValueMemberM).Value["items"].(*types.AttributeValueMemberL).Value[1] = &types.UnknownUnionMember{Tag: "X"}
	_, err = streamimage.ToLambda(item)
	fmt.Println(err)

	// Output:
	// amount: *types.AttributeValueMemberN
	// data: *types.AttributeValueMemberM
	// id: *types.AttributeValueMemberS
	// amount = 1e400
	// streamimage: attribute "data.items[1]": unsupported attribute value type
}
