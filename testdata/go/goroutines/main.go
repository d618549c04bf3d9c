// Command goroutines exercises the Go scheduler on top of the guest's
// threads: a worker pool fed by channels, a sync.WaitGroup, a sync.Mutex
// protected counter, a pipeline, select with a buffered channel and
// runtime.Gosched. All printed values are independent of scheduling.
package main

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

func worker(id int, jobs <-chan int, results chan<- [2]int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		s := 0
		for i := 0; i <= j; i++ {
			s += i * i
		}
		results <- [2]int{j, s}
		if j%7 == 0 {
			runtime.Gosched()
		}
	}
	_ = id
}

func main() {
	fmt.Println("GOMAXPROCS > 0:", runtime.GOMAXPROCS(0) > 0)

	// Worker pool.
	jobs := make(chan int, 10)
	results := make(chan [2]int, 10)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go worker(w, jobs, results, &wg)
	}
	go func() {
		for j := 0; j < 200; j++ {
			jobs <- j
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	got := map[int]int{}
	for r := range results {
		got[r[0]] = r[1]
	}
	keys := make([]int, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	total := 0
	for _, k := range keys {
		total += got[k]
	}
	fmt.Printf("pool: %d results, first=%d last=%d total=%d\n", len(keys), got[keys[0]], got[keys[len(keys)-1]], total)

	// Mutex-protected counter.
	var mu sync.Mutex
	counter := 0
	var atomicCounter atomic.Int64
	var wg2 sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg2.Add(1)
		go func(g int) {
			defer wg2.Done()
			for i := 0; i < 1000; i++ {
				mu.Lock()
				counter += g
				mu.Unlock()
				atomicCounter.Add(1)
			}
		}(g)
	}
	wg2.Wait()
	fmt.Printf("mutex counter=%d atomic=%d\n", counter, atomicCounter.Load())

	// Pipeline: generate -> square -> sum.
	gen := func(n int) <-chan int {
		c := make(chan int)
		go func() {
			for i := 1; i <= n; i++ {
				c <- i
			}
			close(c)
		}()
		return c
	}
	sq := func(in <-chan int) <-chan int {
		c := make(chan int)
		go func() {
			for v := range in {
				c <- v * v
			}
			close(c)
		}()
		return c
	}
	sum := 0
	for v := range sq(sq(gen(50))) {
		sum += v
	}
	fmt.Println("pipeline sum of 4th powers 1..50:", sum)

	// Ping-pong between two goroutines over unbuffered channels.
	ping, pong := make(chan int), make(chan int)
	done := make(chan struct{})
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(done)
	}()
	v := 0
	for i := 0; i < 1000; i++ {
		ping <- v
		v = <-pong
	}
	close(ping)
	<-done
	fmt.Println("ping-pong:", v)

	// select over a buffered channel and a quit channel.
	data := make(chan int, 5)
	quit := make(chan bool)
	go func() {
		for i := 0; i < 20; i++ {
			data <- i
		}
		quit <- true
	}()
	n, s := 0, 0
loop:
	for {
		select {
		case d := <-data:
			n++
			s += d
		case <-quit:
			for {
				select {
				case d := <-data:
					n++
					s += d
				default:
					break loop
				}
			}
		}
	}
	fmt.Printf("select: received %d values, sum %d\n", n, s)

	// sync.Once and a panic recovered in a goroutine.
	var once sync.Once
	calls := 0
	var wg3 sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg3.Add(1)
		go func() {
			defer wg3.Done()
			once.Do(func() { calls++ })
		}()
	}
	wg3.Wait()
	rec := make(chan string)
	go func() {
		defer func() { rec <- fmt.Sprint("recovered: ", recover()) }()
		var m map[string]int
		m["boom"] = 1
	}()
	fmt.Println("once calls:", calls)
	fmt.Println(<-rec)
}
