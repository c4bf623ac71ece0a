//go:build lambdaonly

package lib

import "os/exec"

// Shell runs a program: only in the lambdaonly build.
func Shell() error { return exec.Command("true").Run() }
