package projector_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// itemShape returns an empty typed item (schema's *Item struct) for a
// projection item of a table, nil when the table has none.
func itemShape(table string, item map[string]types.AttributeValue) any {
	switch table {
	case schema.TableExecutions:
		return &schema.ExecutionItem{}
	case schema.TableMessages:
		return &schema.MessageItem{}
	case schema.TableWorkflowJobs:
		return &schema.JobItem{}
	case schema.TableDeployments:
		return &schema.DeploymentItem{}
	case schema.TableWorkflowRuns:
		return &schema.RunJobItem{}
	case schema.TableWorkflows:
		e, _ := item["entityType"].(*types.AttributeValueMemberS)
		if e == nil {
			return nil
		}
		switch e.Value {
		case schema.EntityExecution:
			return &schema.WorkflowExecutionItem{}
		case schema.EntityAlbum:
			return &schema.AlbumItem{}
		case schema.EntityTask:
			return &schema.TaskItem{}
		}
	}
	return nil
}

// TestItemsMatchTheirShapes folds every fixture and checks that each item
// decodes into its typed shape and marshals back to itself: the shapes
// name every attribute the folds write, with its type.
func TestItemsMatchTheirShapes(t *testing.T) {
	for _, name := range foldCases {
		t.Run(name, func(t *testing.T) {
			evs := foldLoad(t, filepath.Join("testdata", "fold", name+".ndjson"))
			n := 0
			for subject, a := range foldAll(t, evs) {
				for _, it := range a.Items() {
					shape := itemShape(it.Table, it.Item)
					if shape == nil {
						t.Fatalf("%s: no item shape for a %s item", subject, it.Table)
					}
					if err := attributevalue.UnmarshalMap(it.Item, shape); err != nil {
						t.Fatalf("%s: decode %T: %v", subject, shape, err)
					}
					back, err := attributevalue.MarshalMap(shape)
					if err != nil {
						t.Fatalf("%s: marshal %T: %v", subject, shape, err)
					}
					if !reflect.DeepEqual(back, it.Item) {
						t.Fatalf("%s: %T does not round-trip:\n got %#v\nwant %#v", subject, shape, back, it.Item)
					}
					n++
				}
			}
			if n == 0 {
				t.Fatal("no items")
			}
		})
	}
}
