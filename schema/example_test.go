package schema_test

import (
	"fmt"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func ExampleValidate() {
	e := schema.Event{
		ID:     "evt-1",
		Source: "streamfold.albums/step-functions",
		Type:   schema.TypeAlbumExtracted,
		Time:   time.Date(2025, 1, 15, 10, 31, 0, 0, time.UTC),
		Data:   []byte(`{"workflowType":"step-functions","executionId":"6f1c1f9e-3b7a-4a53-9d55-2a0b8f4f1c01","albumIndex":1,"albumName":"Abbey Road","artist":"The Beatles","year":1869}`),
	}
	_, err := schema.Validate(&e)
	fmt.Println(err)
	// Output: data.year: must be between 1900 and 2100
}

func ExampleAgentName() {
	fmt.Println(schema.AgentName("arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"))
	// Output: my-agent
}
