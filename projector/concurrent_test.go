package projector_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
)

// TestConcurrentProjectorsDynamoDB runs four projectors side by side on one
// DynamoDB Local store, each delivered every record in its own batching
// and its own order of subjects (as with ParallelizationFactor > 1, or a
// rebuild racing the live stream): they contend for the same aggregates
// and the same hot counter rows. Afterwards every projection equals the
// reference fold, with nothing failed.
func TestConcurrentProjectorsDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("concurrent projectors on DynamoDB Local skipped in -short mode")
	}
	p := newPipeline(t)
	evs := workloadN(t, 7, 3000)
	recs := lambdaRecords(t, evs)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			proj, err := projector.New(p.store, projector.Config{Concurrency: 2})
			if err != nil {
				errs <- err.Error()
				return
			}
			h := projector.NewHandler(proj, p.dl, projector.HandlerConfig{}, testenv.QuietLog())
			// Each worker walks the records from its own offset (wrapping
			// around), so that they meet on the same rows at different times.
			off := w * len(recs) / 4
			order := append(append([]events.DynamoDBEventRecord(nil), recs[off:]...), recs[:off]...)
			for i := 0; i < len(order); {
				n := 1 + rng.IntN(200)
				batch := order[i:min(i+n, len(order))]
				for attempt := 0; ; attempt++ {
					resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: batch})
					if err != nil {
						errs <- err.Error()
						return
					}
					if len(resp.BatchItemFailures) == 0 {
						break
					}
					// Resume at the failed record, as the mapping would.
					for j, r := range batch {
						if r.Change.SequenceNumber == resp.BatchItemFailures[0].ItemIdentifier {
							batch = batch[j:]
							break
						}
					}
					if attempt > 50 {
						errs <- "a batch kept failing: " + resp.BatchItemFailures[0].ItemIdentifier
						return
					}
				}
				i += n
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if letters, _ := p.dl.List(context.Background(), "projector"); len(letters) > 0 {
		t.Fatalf("%d records dead-lettered; first: %+v", len(letters), letters[0])
	}
	want, counters := reference(t, evsFromRecords(t, recs))
	got := actual(t, p.c, p.n, counters)
	compareViews(t, want, got)
	checkCountersFromItems(t, got)
}
