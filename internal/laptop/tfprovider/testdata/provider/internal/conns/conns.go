package conns

import "context"

// AWSClient holds the clients.
type AWSClient struct{}

// ServicePackage is one service's registrations.
type ServicePackage interface{ Registrations() []Reg }

// Reg registers one Terraform type.
type Reg struct{ TypeName string }

// Ctx is what the service packages call the clients with.
var Ctx = context.Background()
