// Command preempt needs asynchronous preemption: with GOMAXPROCS=1 a
// goroutine spins in a loop without function calls until a flag is set, and
// the goroutine that sets the flag (started first, sleeping in time.Sleep)
// can only run if the runtime preempts the spinner with a signal (SIGURG
// sent by tgkill). The second round needs a stop-the-world: runtime.GC is
// called from another goroutine while one spins.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

var sink int

func spin(flag *atomic.Bool, done chan<- int) {
	x := 0
	for {
		if flag.Load() {
			break
		}
		x++
	}
	done <- x
}

func main() {
	prev := runtime.GOMAXPROCS(1)
	fmt.Println("GOMAXPROCS now", runtime.GOMAXPROCS(0), "previous >= 1:", prev >= 1)

	var flag atomic.Bool
	done := make(chan int)
	go func() {
		time.Sleep(20 * time.Millisecond)
		flag.Store(true)
	}()
	go spin(&flag, done)
	x := <-done
	sink += x
	fmt.Println("round 1: the sleeper ran while the spinner spun; spinner stopped")

	var flag2 atomic.Bool
	done2 := make(chan int)
	go func() {
		time.Sleep(5 * time.Millisecond)
		runtime.GC()
		flag2.Store(true)
	}()
	go spin(&flag2, done2)
	x = <-done2
	sink += x
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("round 2: runtime.GC completed while a goroutine spun:", ms.NumGC >= 1)
}
