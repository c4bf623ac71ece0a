package emf

import (
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	b, err := Line(Datum{Namespace: "Streamfold", Metric: "DeadLettered", Value: 1, Time: at,
		Dims: []Dim{{"Table", "t"}, {"Consumer", "projector"}}, Fields: map[string]string{"Reason": "poison"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Consumer":"projector","DeadLettered":1,"Reason":"poison","Table":"t","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Table","Consumer"]],"Metrics":[{"Name":"DeadLettered","Unit":"Count"}],"Namespace":"Streamfold"}],"Timestamp":1795489200000}}` + "\n"
	if string(b) != want {
		t.Fatalf("EMF line\n  %s\nwant\n  %s", b, want)
	}
}
