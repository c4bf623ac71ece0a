// Command clean is a "Lambda binary" within the walls.
package main

import "fmt"

func main() { fmt.Println("clean") }
