package archiver

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
)

// partitionFieldID is the id of the day(event_time) partition field
// (partition field ids start at 1000).
const partitionFieldID = 1000

// IcebergSchema returns the Iceberg schema of an archive table: its columns
// with their stable field ids (Column.ID), in id order, the envelope
// columns required, every other column optional.
func IcebergSchema(name string) (*iceberg.Schema, error) {
	t, ok := tableByName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, name)
	}
	fields := make([]iceberg.NestedField, 0, len(t.cols))
	for _, c := range t.cols {
		typ, err := icebergType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("archiver: table %s column %s: %w", name, c.Name, err)
		}
		fields = append(fields, iceberg.NestedField{ID: c.ID, Name: c.Name, Type: typ, Required: c.Required, Doc: c.Comment})
	}
	// Ordered by id: creating a table assigns fresh ids in schema order, so
	// this order keeps Column.ID (the envelope 1-12, then the typed columns).
	slices.SortFunc(fields, func(a, b iceberg.NestedField) int { return a.ID - b.ID })
	return iceberg.NewSchema(0, fields...), nil
}

func icebergType(glueType string) (iceberg.Type, error) {
	switch glueType {
	case TypeString:
		return iceberg.PrimitiveTypes.String, nil
	case TypeBigint:
		return iceberg.PrimitiveTypes.Int64, nil
	case TypeInt:
		return iceberg.PrimitiveTypes.Int32, nil
	case TypeDouble:
		return iceberg.PrimitiveTypes.Float64, nil
	case TypeBoolean:
		return iceberg.PrimitiveTypes.Bool, nil
	case TypeTimestamp:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	}
	return nil, fmt.Errorf("no Iceberg type for %q", glueType)
}

// partitionSpec is day(event_time), the partition of every table.
func partitionSpec(s *iceberg.Schema) (iceberg.PartitionSpec, error) {
	f, ok := s.FindFieldByName("event_time")
	if !ok {
		return iceberg.PartitionSpec{}, errors.New("archiver: schema has no event_time")
	}
	return iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{f.ID}, FieldID: partitionFieldID, Name: "event_time_day", Transform: iceberg.DayTransform{},
	}), nil
}
