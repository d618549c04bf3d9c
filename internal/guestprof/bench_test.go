package guestprof

import "testing"

// BenchmarkSample measures one sample (unwind + aggregation) of a
// 4-frame and a 64-frame stack, the per-sample cost behind the overhead
// of profiling (divide by Period × ns per guest instruction).
func BenchmarkSample(b *testing.B) {
	for _, a := range arches {
		c := loadFibfp(b, a.name, a.arch)
		c.chain(b)
		p := New(Options{})
		b.Run(a.name+"/depth4", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.Sample(1, a.arch, c.retFF, sp, f1, c.retFF, c.mm)
			}
		})
		for x := uint64(stackBase); x+16 <= stackTop; x += 16 {
			c.put(b, x, x+16, c.retFF)
		}
		b.Run(a.name+"/depth64", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.Sample(1, a.arch, c.retFF, stackBase, stackTop-64*16, 0, c.mm)
			}
		})
	}
}
