// Package emf writes CloudWatch embedded metric format (EMF) documents: one
// JSON line per datum, which CloudWatch Logs turns into a metric when a
// Lambda function writes it to its standard output. No SDK client and no
// IAM permission are needed.
//
// A document holds the metric's value under its name, each dimension and
// each extra field as a top-level string member, and the "_aws" metadata
// (timestamp, namespace, the one dimension set in the given order, the
// metric and its unit). Line is a pure function; Write is safe for
// concurrent use only if w is.
package emf

import (
	"encoding/json"
	"io"
	"time"
)

// Dim is one dimension of a datum.
type Dim struct{ Name, Value string }

// Datum is one metric value.
type Datum struct {
	Namespace string
	Metric    string
	// Unit defaults to "Count".
	Unit  string
	Value float64
	// Dims are the datum's dimensions, in this order.
	Dims []Dim
	// Fields are extra top-level members, searchable in the logs but not
	// dimensions (e.g. a reason).
	Fields map[string]string
	Time   time.Time
}

// Line returns the datum's EMF document, newline-terminated.
func Line(d Datum) ([]byte, error) {
	unit := d.Unit
	if unit == "" {
		unit = "Count"
	}
	doc := make(map[string]any, len(d.Dims)+len(d.Fields)+2)
	for k, v := range d.Fields {
		doc[k] = v
	}
	names := make([]string, len(d.Dims))
	for i, dim := range d.Dims {
		names[i] = dim.Name
		doc[dim.Name] = dim.Value
	}
	doc[d.Metric] = d.Value
	doc["_aws"] = map[string]any{
		"Timestamp": d.Time.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  d.Namespace,
			"Dimensions": [][]string{names},
			"Metrics":    []any{map[string]string{"Name": d.Metric, "Unit": unit}},
		}},
	}
	b, err := json.Marshal(doc)
	return append(b, '\n'), err
}

// Write writes the datum's line to w.
func Write(w io.Writer, d Datum) error {
	b, err := Line(d)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
