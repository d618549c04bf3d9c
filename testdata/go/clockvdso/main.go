// Command clockvdso is a clock-heavy Go guest: goroutines read time.Now
// in tight loops (Go's runtime takes the vDSO for walltime and nanotime on
// both arches) and check that the monotonic clock never goes backwards,
// that sleeps last at least as long as asked, and that the wall clock
// moves with the monotonic one. It prints only what holds whatever the
// clock's rate, so its output is the same with and without a vDSO.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

func main() {
	const workers, reads = 4, 20000
	var wg sync.WaitGroup
	back := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			prev := time.Now()
			for i := 0; i < reads; i++ {
				now := time.Now()
				if now.Before(prev) {
					back[w]++
				}
				prev = now
			}
		}(w)
	}
	wg.Wait()
	bad := 0
	for w, n := range back {
		if n != 0 {
			fmt.Printf("worker %d: monotonic clock went backwards %d times\n", w, n)
			bad++
		}
	}
	fmt.Printf("%d goroutines x %d reads: monotonic\n", workers, reads)

	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond} {
		t0 := time.Now()
		time.Sleep(d)
		if el := time.Since(t0); el < d {
			fmt.Printf("sleep %v took %v\n", d, el)
			bad++
		}
	}
	fmt.Println("sleeps last as long as asked")

	w0, m0 := time.Now().Round(0), time.Now()
	for time.Since(m0) < 2*time.Millisecond {
	}
	w1, m1 := time.Now().Round(0), time.Now()
	dw, dm := w1.Sub(w0), m1.Sub(m0)
	if diff := dw - dm; diff < -time.Millisecond || diff > time.Millisecond {
		fmt.Printf("wall clock moved %v while monotonic moved %v\n", dw, dm)
		bad++
	}
	if y := w1.Year(); y < 2020 {
		fmt.Printf("wall clock year %d\n", y)
		bad++
	}
	fmt.Println("wall clock follows the monotonic clock")
	if bad != 0 {
		os.Exit(1)
	}
}
