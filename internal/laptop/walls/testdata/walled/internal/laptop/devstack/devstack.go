// Package devstack stands for laptop-only code.
package devstack

import "testing"

// Up does nothing.
func Up() { _ = testing.Short }
