package localrun

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
)

// ConsumerSummary is one consumer's part of a Result.
type ConsumerSummary struct {
	streamrun.Stats
	Consumer string `json:"consumer"`
	// Quarantined counts the distinct records the consumer quarantined in
	// this run: poison records (the projector's in the dead-letter table,
	// the archiver's under the archive's errors/ prefix) and records that
	// exhausted their retries (Stats.Poisoned, in the dead-letter table). A
	// record quarantined again on a retry counts once. The text summary's
	// "dead-lettered" is this number.
	Quarantined int64  `json:"quarantined"`
	Error       string `json:"error,omitempty"`
	// ConsumedCapacity is what the consumer's DynamoDB calls consumed,
	// with perRecord over Stats.Records.
	ConsumedCapacity capacity.Snapshot `json:"consumedCapacity"`
}

// Result is what a run did: the CLI's run summary.
type Result struct {
	Projector  ConsumerSummary  `json:"projector"`
	Archiver   *ConsumerSummary `json:"archiver,omitempty"`
	ArchiveURI string           `json:"archiveUri,omitempty"`
	Seconds    float64          `json:"seconds"`
	DeadLetter string           `json:"deadLetterTable"`
}

// WriteText prints the result for people: per consumer what it handled,
// what its DynamoDB calls consumed per record and in all, and what that
// costs per million records on demand.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	consumers := []ConsumerSummary{r.Projector}
	if r.Archiver != nil {
		consumers = append(consumers, *r.Archiver)
	}
	for _, c := range consumers {
		fmt.Fprintf(&b, "%-9s  %d records in %d batches, %d retries, %d dead-lettered", c.Consumer, c.Records, c.Batches, c.Retries, c.Quarantined)
		if c.Gaps > 0 {
			fmt.Fprintf(&b, ", %d gaps noticed (see the log; recorded in the checkpoints table)", c.Gaps)
		}
		if c.Error != "" {
			fmt.Fprintf(&b, ", stopped: %s", c.Error)
		}
		b.WriteString("\n")
		c.ConsumedCapacity.WriteText(&b, "           ", "record", c.ConsumedCapacity.PerRecord)
	}
	fmt.Fprintf(&b, "prices: %s: $%g per million write units, $%g per million read units\n",
		capacity.PriceNote, capacity.WriteRequestUnitPrice, capacity.ReadRequestUnitPrice)
	fmt.Fprintf(&b, "%.1fs; dead letters in %s", r.Seconds, r.DeadLetter)
	if r.ArchiveURI != "" {
		fmt.Fprintf(&b, "; archive %s", r.ArchiveURI)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// ProgressPrinter is an Options.Progress that prints a consumer's counters
// on w when they moved: its first report, then one line per change, never
// the same line twice. approx says the lag is only as precise as DynamoDB
// Local's minute-rounded record times.
func ProgressPrinter(w io.Writer, approx bool) func(consumer string, s streamrun.Stats) {
	var mu sync.Mutex
	last := map[string]streamrun.Stats{}
	return func(consumer string, s streamrun.Stats) {
		mu.Lock()
		defer mu.Unlock()
		prev, seen := last[consumer]
		cur := s
		prev.LagMillis, cur.LagMillis = 0, 0
		if seen && prev == cur {
			return
		}
		last[consumer] = s
		lag := fmt.Sprintf("lag %.1fs", float64(s.LagMillis)/1000)
		if approx {
			lag = fmt.Sprintf("lag ~%ds (approximate: DynamoDB Local rounds record times down to the minute)", (s.LagMillis+500)/1000)
		}
		fmt.Fprintf(w, "run: %-9s %d records in %d batches, %s, shards %d open %d done, retries %d, dead-lettered %d\n",
			consumer, s.Records, s.Batches, lag, s.ShardsOpen, s.ShardsDone, s.Retries, s.Poisoned)
	}
}
