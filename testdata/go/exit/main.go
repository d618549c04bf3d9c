// Command exit prints a line and exits with status 7.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("exiting with 7")
	os.Exit(7)
}
