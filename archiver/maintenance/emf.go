package maintenance

import (
	"encoding/json"
	"io"
	"time"
)

// Namespace is the CloudWatch namespace of the maintenance metrics.
const Namespace = "Streamfold"

// Metric names.
const (
	MetricSucceeded         = "MaintenanceSucceeded"
	MetricVerifyDifferences = "VerifyDifferences"
)

// emfLine is one CloudWatch embedded metric format document: the metric
// value under its name, the dimensions as top-level string members.
func emfLine(at time.Time, dims map[string]string, metric string, value float64) ([]byte, error) {
	names := make([]string, 0, len(dims))
	doc := map[string]any{}
	for _, k := range []string{"Deployment", "Task"} { // stable order
		if v, ok := dims[k]; ok {
			names = append(names, k)
			doc[k] = v
		}
	}
	doc[metric] = value
	doc["_aws"] = map[string]any{
		"Timestamp": at.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{names},
			"Metrics":    []any{map[string]string{"Name": metric, "Unit": "Count"}},
		}},
	}
	b, err := json.Marshal(doc)
	return append(b, '\n'), err
}

func writeMetric(w io.Writer, at time.Time, dims map[string]string, metric string, value float64) error {
	b, err := emfLine(at, dims, metric, value)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
