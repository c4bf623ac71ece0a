package capacity

import (
	"maps"
	"math"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Units are read and write capacity units.
type Units struct {
	Write float64 `json:"writeUnits"`
	Read  float64 `json:"readUnits"`
}

func (u *Units) add(v Units) { u.Write += v.Write; u.Read += v.Read }

// TableUnits are the units one table consumed: Units is the table's whole
// share (its base table and its indexes together, what is billed); Indexes
// splits out the part each secondary index consumed, when DynamoDB said
// (it does when asked for INDEXES, which WithMeter does).
type TableUnits struct {
	Units
	Indexes map[string]Units `json:"indexes,omitempty"`
}

// Operation is what one DynamoDB operation (PutItem, TransactWriteItems, ...)
// consumed.
type Operation struct {
	Units
	// Calls is how many calls were made, failed ones included.
	Calls int64 `json:"calls"`
	// Failed is how many of them returned an error and so reported no
	// capacity (see the package comment: AWS still charges a failed
	// conditional write).
	Failed int64 `json:"failed,omitempty"`
}

// Rate is units per record (or per event) and what that costs.
type Rate struct {
	Write float64 `json:"write"`
	Read  float64 `json:"read"`
	// DollarsPerMillion is the on-demand price of a million records at
	// this rate (WriteRequestUnitPrice, ReadRequestUnitPrice).
	DollarsPerMillion float64 `json:"dollarsPerMillion"`
}

// Snapshot is what a Meter has accumulated. It marshals to
//
//	{"writeUnits":..,"readUnits":..,"perRecord":{"write":..,"read":..,"dollarsPerMillion":..},
//	 "byTable":{"<table>":{"writeUnits":..,"readUnits":..,"indexes":{..}}},
//	 "byOperation":{"PutItem":{"writeUnits":..,"readUnits":..,"calls":..,"failed":..}},
//	 "dollars":..}
//
// perRecord (ForRecords) or perEvent (ForEvents) appear once set.
type Snapshot struct {
	Units
	// PerRecord relates the units to the stream records a consumer handled.
	PerRecord *Rate `json:"perRecord,omitempty"`
	// PerEvent relates the units to the events a producer appended.
	PerEvent *Rate `json:"perEvent,omitempty"`
	// ByTable is keyed by the table name DynamoDB reported (the physical
	// name; TrimTablePrefix makes it the logical one).
	ByTable map[string]TableUnits `json:"byTable"`
	// ByOperation is keyed by operation name.
	ByOperation map[string]Operation `json:"byOperation"`
	// Dollars is the on-demand price of all the units (Price).
	Dollars float64 `json:"dollars"`
}

// Per returns the units per record for n records (zero when n is not positive).
func (s Snapshot) Per(n int64) Rate {
	if n <= 0 {
		return Rate{}
	}
	r := Rate{Write: round(s.Write / float64(n)), Read: round(s.Read / float64(n))}
	r.DollarsPerMillion = round(Price(Units{Write: s.Write / float64(n), Read: s.Read / float64(n)}) * 1e6)
	return r
}

// ForRecords returns s with PerRecord set for n stream records.
func (s Snapshot) ForRecords(n int64) Snapshot {
	r := s.Per(n)
	s.PerRecord = &r
	return s
}

// ForEvents returns s with PerEvent set for n appended events.
func (s Snapshot) ForEvents(n int64) Snapshot {
	r := s.Per(n)
	s.PerEvent = &r
	return s
}

// TrimTablePrefix returns s with prefix removed from the table names of
// ByTable (e.g. "streamfold-dev-" to key it by logical table name). Names
// without the prefix stay; two that become one are added together.
func (s Snapshot) TrimTablePrefix(prefix string) Snapshot {
	out := make(map[string]TableUnits, len(s.ByTable))
	for name, t := range s.ByTable {
		name = strings.TrimPrefix(name, prefix)
		prev, ok := out[name]
		if !ok {
			out[name] = TableUnits{Units: t.Units, Indexes: maps.Clone(t.Indexes)}
			continue
		}
		prev.add(t.Units)
		for ix, u := range t.Indexes {
			if prev.Indexes == nil {
				prev.Indexes = map[string]Units{}
			}
			v := prev.Indexes[ix]
			v.add(u)
			prev.Indexes[ix] = v
		}
		out[name] = prev
	}
	s.ByTable = out
	return s
}

// round keeps 4 decimals: enough for units per record, and stable in JSON.
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// Meter accumulates consumed capacity. The zero value is not usable; use
// NewMeter. A nil *Meter ignores everything recorded and snapshots as empty,
// so optional metering needs no branches.
type Meter struct {
	mu     sync.Mutex
	total  Units
	tables map[string]*TableUnits
	ops    map[string]*Operation
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter {
	return &Meter{tables: map[string]*TableUnits{}, ops: map[string]*Operation{}}
}

// Record adds what one successful call of operation op consumed, as
// DynamoDB reported it (one ConsumedCapacity per table the call touched).
// Units the reply does not split into read and write are classified by the
// operation: read units for the operations Reads names, else write units.
func (m *Meter) Record(op string, ccs ...types.ConsumedCapacity) {
	m.record(op, !Reads(op), ccs)
}

func (m *Meter) record(op string, write bool, ccs []types.ConsumedCapacity) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.op(op)
	o.Calls++
	for _, cc := range ccs {
		table, indexes := split(cc, write)
		name := "unknown"
		if cc.TableName != nil {
			name = *cc.TableName
		}
		t := m.tables[name]
		if t == nil {
			t = &TableUnits{}
			m.tables[name] = t
		}
		sum := table
		for ix, u := range indexes {
			if t.Indexes == nil {
				t.Indexes = map[string]Units{}
			}
			v := t.Indexes[ix]
			v.add(u)
			t.Indexes[ix] = v
			sum.add(u)
		}
		t.add(sum)
		o.add(sum)
		m.total.add(sum)
	}
}

// Failed counts a call of op that returned an error and so reported nothing.
func (m *Meter) Failed(op string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.op(op)
	o.Calls++
	o.Failed++
}

func (m *Meter) op(name string) *Operation {
	o := m.ops[name]
	if o == nil {
		o = &Operation{}
		m.ops[name] = o
	}
	return o
}

// Snapshot returns a copy of what has been recorded so far.
func (m *Meter) Snapshot() Snapshot {
	s := Snapshot{ByTable: map[string]TableUnits{}, ByOperation: map[string]Operation{}}
	if m == nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s.Units = m.total
	for name, t := range m.tables {
		c := TableUnits{Units: t.Units}
		if len(t.Indexes) > 0 {
			c.Indexes = maps.Clone(t.Indexes)
		}
		s.ByTable[name] = c
	}
	for name, o := range m.ops {
		s.ByOperation[name] = *o
	}
	s.Dollars = Price(s.Units)
	return s
}

// split returns the base table's units and each index's units of one
// ConsumedCapacity. A Capacity that splits its units into ReadCapacityUnits
// and WriteCapacityUnits is taken as given; one that gives only
// CapacityUnits is all write units when write, else all read units. When the reply has no
// per-table breakdown (TOTAL), its totals are the table's.
func split(cc types.ConsumedCapacity, write bool) (Units, map[string]Units) {
	if cc.Table == nil && len(cc.GlobalSecondaryIndexes) == 0 && len(cc.LocalSecondaryIndexes) == 0 {
		return units(types.Capacity{CapacityUnits: cc.CapacityUnits, ReadCapacityUnits: cc.ReadCapacityUnits, WriteCapacityUnits: cc.WriteCapacityUnits}, write), nil
	}
	var table Units
	if cc.Table != nil {
		table = units(*cc.Table, write)
	}
	indexes := map[string]Units{}
	for _, m := range []map[string]types.Capacity{cc.GlobalSecondaryIndexes, cc.LocalSecondaryIndexes} {
		for name, c := range m {
			u := indexes[name]
			u.add(units(c, write))
			indexes[name] = u
		}
	}
	if cc.Table == nil {
		// Indexes without the base table's share: the rest of the total is the table's.
		var ix Units
		for _, u := range indexes {
			ix.add(u)
		}
		all := units(types.Capacity{CapacityUnits: cc.CapacityUnits, ReadCapacityUnits: cc.ReadCapacityUnits, WriteCapacityUnits: cc.WriteCapacityUnits}, write)
		table = Units{Write: max(all.Write-ix.Write, 0), Read: max(all.Read-ix.Read, 0)}
	}
	return table, indexes
}

func units(c types.Capacity, write bool) Units {
	if r, w := deref(c.ReadCapacityUnits), deref(c.WriteCapacityUnits); r+w > 0 {
		return Units{Write: w, Read: r}
	}
	if write {
		return Units{Write: deref(c.CapacityUnits)}
	}
	return Units{Read: deref(c.CapacityUnits)}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
