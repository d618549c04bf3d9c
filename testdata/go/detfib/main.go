// Command detfib is the host-independence guest of the deterministic
// scheduler: 8 goroutines each compute recursive fib(20..24) while the Go
// runtime creates threads, parks and wakes them on futexes, preempts
// them with SIGURG (tgkill) and reads the clock. Under --det its trace
// must be the same bytes whatever the host's GOMAXPROCS, cores or load.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	const workers = 8
	var wg sync.WaitGroup
	res := make([][]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 20; n <= 24; n++ {
				res[w] = append(res[w], fib(n))
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("cpus", runtime.NumCPU(), "gomaxprocs", runtime.GOMAXPROCS(0))
	for w, r := range res {
		fmt.Println(w, r)
	}
}
