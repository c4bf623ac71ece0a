// Command fn is a "Lambda binary" that reaches laptop-only code.
package main

import "example.com/walled/lib"

func main() { lib.Run() }
