// Command hello is the smallest Go guest.
package main

import "fmt"

func main() {
	fmt.Println("Hello from Go!")
}
