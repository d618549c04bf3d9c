// deeprec recurses deep enough that the goroutine's stack must grow (and
// be copied) several times. Under a uretprobe on main.rec this reproduces
// golang/go#22008: the runtime meets the uretprobe trampoline as a return
// address while copying the stack.
package main

import "fmt"

//go:noinline
func rec(n int) int {
	if n == 0 {
		return 0
	}
	var pad [16]int
	pad[n%16] = n
	return rec(n-1) + pad[n%16] - n + 1
}

func main() {
	fmt.Println("depth", rec(100000))
}
