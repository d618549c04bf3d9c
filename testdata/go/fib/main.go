// Command fib is a call-heavy Go guest with one hot function, for the
// guest profiler's tests: main.main → main.run → main.fib (recursive).
// N comes from the first argument (default 30).
package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

//go:noinline
func run(n int) int {
	return fib(n)
}

func main() {
	n := 30
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			n = v
		}
	}
	fmt.Printf("fib(%d) = %d\n", n, run(n))
}
