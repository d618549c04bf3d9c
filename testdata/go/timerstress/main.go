// timerstress is timer-heavy Go work in the shape of the time package's
// TestStopResult: many goroutines each start, stop and reset short timers
// and sleep briefly, so the runtime's timer heap, netpoller
// (epoll_pwait with a timeout), futex sleeps and nanotime calls dominate.
// It prints only counts, so the output is the same anywhere.
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	gs := flag.Int("g", 1000, "goroutines")
	n := flag.Int("n", 100, "timers per goroutine")
	flag.Parse()
	var fired, stopped atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < *gs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < *n; j++ {
				d := time.Duration((i*7+j*13)%50) * 10 * time.Microsecond
				tm := time.NewTimer(d)
				if j%2 == 0 {
					time.Sleep(time.Duration(j%5) * 100 * time.Microsecond)
				}
				if tm.Stop() {
					stopped.Add(1)
				} else {
					<-tm.C
					fired.Add(1)
				}
			}
		}(i)
	}
	wg.Wait()
	fmt.Println("timers:", fired.Load()+stopped.Load())
}
