// Command nilpanic recovers from run-time panics that come from hardware
// faults (SIGSEGV turned into a panic by the Go runtime's signal handler):
// a nil pointer dereference (load and store), a call through a nil func
// value, a nil dereference inside another goroutine, and, with
// debug.SetPanicOnFault, a load from an unmapped page whose address is
// reported by the error's Addr method. Also integer division by zero.
package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"
)

type node struct {
	val  int
	next *node
}

var (
	nilNode *node
	nilFunc func() int
	zero    int
)

//go:noinline
func load(n *node) int { return n.next.val }

//go:noinline
func store(n *node) { n.val = 5 }

//go:noinline
func call(f func() int) int { return f() }

//go:noinline
func div(a, b int) int { return a / b }

func try(name string, f func()) {
	defer func() {
		r := recover()
		_, isRuntime := r.(runtime.Error)
		fmt.Printf("%s: recovered %q (runtime.Error: %v)\n", name, fmt.Sprint(r), isRuntime)
	}()
	f()
	fmt.Printf("%s: no panic\n", name)
}

func main() {
	try("nil load", func() { _ = load(&node{}) })
	try("nil store", func() { store(nilNode) })
	try("nil func call", func() { _ = call(nilFunc) })
	try("divide by zero", func() { _ = div(7, zero) })

	done := make(chan string)
	go func() {
		defer func() { done <- fmt.Sprint(recover()) }()
		store(nilNode)
	}()
	fmt.Println("in a goroutine: recovered", <-done)

	mem, err := syscall.Mmap(-1, 0, syscall.Getpagesize(), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		fmt.Println("mmap:", err)
		return
	}
	p := unsafe.Pointer(&mem[8])
	want := uintptr(p)
	if err := syscall.Munmap(mem); err != nil {
		fmt.Println("munmap:", err)
		return
	}
	debug.SetPanicOnFault(true)
	try("load from an unmapped page", func() {
		defer func() {
			r := recover()
			a, ok := r.(interface{ Addr() uintptr })
			fmt.Println("fault error has Addr:", ok, "and it is the faulting address:", ok && a.Addr() == want)
			panic(r)
		}()
		_ = *(*int64)(p)
	})
}
