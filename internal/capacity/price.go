package capacity

// On-demand prices of DynamoDB, Standard table class, in us-east-1 (N.
// Virginia), as AWS lists them after its price cut of 1 November 2024 (on-demand
// throughput halved: write request units from $1.25 to $0.625 per million,
// read request units from $0.25 to $0.125). Seed 003 quotes the older prices.
// Other regions and the Standard-Infrequent Access class cost more; storage,
// streams reads outside Lambda, backups and data transfer are not included.
const (
	// PriceDate is the date from which the prices below apply.
	PriceDate = "2024-11-01"
	// PriceRegion is the region the prices below are for.
	PriceRegion = "us-east-1"
	// WriteRequestUnitPrice is US dollars per million write request units
	// (one unit per started KB written; two inside a transaction).
	WriteRequestUnitPrice = 0.625
	// ReadRequestUnitPrice is US dollars per million read request units (one
	// unit per started 4 KB read strongly consistently, half that eventually
	// consistently; two inside a transaction).
	ReadRequestUnitPrice = 0.125
)

// PriceNote says in a few words where the prices come from, for output
// that prints a price.
const PriceNote = "on-demand, Standard table class, " + PriceRegion + ", prices of " + PriceDate

// Price returns what u costs in US dollars on demand.
func Price(u Units) float64 {
	return (u.Write*WriteRequestUnitPrice + u.Read*ReadRequestUnitPrice) / 1e6
}
