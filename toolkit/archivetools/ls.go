package archivetools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/streamfold/streamfold/archiver"
)

// Partition is one partition (day) of a table in the current snapshot.
type Partition struct {
	Table   string `json:"table"`
	Date    string `json:"date"`
	Objects int    `json:"objects"`
}

// Listing is what Ls found; its JSON is the partitions.
type Listing struct {
	// URI is the archive's.
	URI string
	// Partitions are by table, then date; never nil.
	Partitions []Partition
}

// Ls lists the partitions of the target's tables with their data-file
// counts; date, when set, keeps only that day.
func Ls(ctx context.Context, t Target, date string) (*Listing, error) {
	res := &Listing{Partitions: []Partition{}}
	uri, err := t.each(ctx, "archive ls", func(a *archiver.Archive, name string) error {
		parts, err := a.PartitionObjects(ctx, name)
		if err != nil {
			return err
		}
		for _, d := range slices.Sorted(maps.Keys(parts)) {
			if date == "" || d == date {
				res.Partitions = append(res.Partitions, Partition{Table: name, Date: d, Objects: len(parts[d])})
			}
		}
		return nil
	})
	res.URI = uri
	return res, err
}

// MarshalJSON is the partitions.
func (l *Listing) MarshalJSON() ([]byte, error) { return json.Marshal(l.Partitions) }

// WriteText prints the listing as a table and a total.
func (l *Listing) WriteText(w io.Writer) error {
	total := 0
	err := table(w, "TABLE\tEVENT_DATE\tFILES", func(w io.Writer) {
		for _, p := range l.Partitions {
			fmt.Fprintf(w, "%s\t%s\t%d\n", p.Table, p.Date, p.Objects)
			total += p.Objects
		}
	})
	fmt.Fprintf(w, "%d partitions (days), %d data files in the current snapshots of %s\n", len(l.Partitions), total, l.URI)
	return err
}

// ErrorList are the poison records under the archive's errors/ prefix;
// its JSON is the records.
type ErrorList struct {
	URI string
	// Records are never nil.
	Records []archiver.ErrorRecord
}

// Errors lists the poison records the archiver kept (the target's Table
// is not used: the records are the archive's).
func Errors(ctx context.Context, t Target) (*ErrorList, error) {
	a, err := t.Open(ctx, "archive errors")
	if err != nil {
		return nil, err
	}
	defer a.Close()
	recs, err := a.Errors(ctx)
	if err != nil {
		return nil, fmt.Errorf("archive errors: %w", err)
	}
	if recs == nil {
		recs = []archiver.ErrorRecord{}
	}
	return &ErrorList{URI: a.URI(), Records: recs}, nil
}

// MarshalJSON is the records.
func (l *ErrorList) MarshalJSON() ([]byte, error) { return json.Marshal(l.Records) }

// Found is an error when there are poison records (something to look at).
func (l *ErrorList) Found() error {
	if len(l.Records) == 0 {
		return nil
	}
	return fmt.Errorf("archive errors: %d poison records under %s/errors/", len(l.Records), l.URI)
}

// WriteText prints the records as a table and a count.
func (l *ErrorList) WriteText(w io.Writer) error {
	err := table(w, "SEEN_AT\tSEQUENCE\tEVENT_NAME\tREASON", func(w io.Writer) {
		for _, r := range l.Records {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.SeenAt.UTC().Format(time.RFC3339), r.SequenceNumber, r.EventName, r.Reason)
		}
	})
	fmt.Fprintf(w, "%d poison records under %s/errors/\n", len(l.Records), l.URI)
	return err
}
