package uvm_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/uvm-emu/uvm"
)

// Run a bundled arm64 guest deterministically and look at how it ended.
func Example_run() {
	var out bytes.Buffer
	res, err := uvm.Run(context.Background(), uvm.Config{
		Program: "testdata/bin/arm64/fib",
		Args:    []string{"20"},
		Stdout:  &out,
		Det:     &uvm.Det{Seed: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	fmt.Println("exit", res.ExitCode, "write calls", res.Syscalls["write"])
	// Output:
	// fib(20) = 6765
	// exit 0 write calls 1
}

// Probes are Go callbacks with the thread's registers and memory: count
// the calls of fib (gcc turned most of its recursion into a loop, so the
// kernel's uprobe would see just as few), and read main's return value.
func Example_uprobe() {
	var calls int
	var ret uint64
	_, err := uvm.Run(context.Background(), uvm.Config{
		Program: "testdata/bin/amd64/fib",
		Args:    []string{"10"},
		Det:     &uvm.Det{},
		Probes: []uvm.Probe{
			uvm.Uprobe("fib", func(h *uvm.Hit) uvm.Action { calls++; return uvm.Continue }),
			uvm.Uretprobe("main", func(h *uvm.Hit) { ret = h.Reg(0) }),
		},
	})
	fmt.Println(calls, "calls of fib; main returned", ret, err)
	// Output:
	// 2 calls of fib; main returned 0 <nil>
}

// A deterministic run is a regression test: the trace hash of the same
// program, input and seed is the same on every host and every run.
func Example_golden() {
	hash := func() string {
		res, _ := uvm.Run(context.Background(), uvm.Config{Program: "testdata/bin/amd64/hello", Det: &uvm.Det{Seed: 7}})
		return res.TraceHash
	}
	first, second := hash(), hash()
	fmt.Println(first != "" && first == second)
	// Output:
	// true
}
