package maintenance

import (
	"io"
	"time"

	"github.com/streamfold/streamfold/internal/emf"
)

// Namespace is the CloudWatch namespace of the maintenance metrics.
const Namespace = "Streamfold"

// Metric names.
const (
	MetricSucceeded         = "MaintenanceSucceeded"
	MetricVerifyDifferences = "VerifyDifferences"
)

// emfLine is one CloudWatch embedded metric format document (internal/emf)
// with the dimensions Deployment and Task, in that order, when present.
func emfLine(at time.Time, dims map[string]string, metric string, value float64) ([]byte, error) {
	return emf.Line(datum(at, dims, metric, value))
}

func writeMetric(w io.Writer, at time.Time, dims map[string]string, metric string, value float64) error {
	return emf.Write(w, datum(at, dims, metric, value))
}

func datum(at time.Time, dims map[string]string, metric string, value float64) emf.Datum {
	d := emf.Datum{Namespace: Namespace, Metric: metric, Value: value, Time: at}
	for _, k := range []string{"Deployment", "Task"} { // stable order
		if v, ok := dims[k]; ok {
			d.Dims = append(d.Dims, emf.Dim{Name: k, Value: v})
		}
	}
	return d
}
