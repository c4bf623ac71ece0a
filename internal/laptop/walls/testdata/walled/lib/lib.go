// Package lib is shipped code that imports laptop-only code.
package lib

import "example.com/walled/internal/laptop/devstack"

// Run starts the local stack.
func Run() { devstack.Up() }
