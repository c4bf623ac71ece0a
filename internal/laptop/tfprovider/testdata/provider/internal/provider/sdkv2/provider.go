package sdkv2

import "context"

// Count is how many service packages the provider registers.
func Count() int { return len(servicePackages(context.Background())) }
