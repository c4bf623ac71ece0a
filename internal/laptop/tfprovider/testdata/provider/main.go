// A miniature of the provider's layout for internal/laptop/tfprovider's tests.
package main

import "github.com/hashicorp/terraform-provider-aws/internal/provider/sdkv2"

func main() { _ = sdkv2.Count() }
