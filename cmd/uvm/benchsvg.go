package main

import (
	"fmt"
	"sort"
	"strings"
)

// benchSVG draws M/s per producer against the producer count, one line per
// bench and switch variant.
func benchSVG(rs []benchResult) string {
	type pt struct {
		x int
		y float64
	}
	series := map[string][]pt{}
	maxX, maxY := 1, 0.0
	for _, r := range rs {
		key := strings.TrimPrefix(r.Bench, "trig-")
		if len(r.Switches) > 0 {
			var kv []string
			for k, v := range r.Switches {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			key += " [" + strings.Join(kv, " ") + "]"
		}
		series[key] = append(series[key], pt{r.Producers, r.PerProd})
		maxX = max(maxX, r.Producers)
		maxY = max(maxY, r.PerProd)
	}
	if maxY == 0 {
		maxY = 1
	}
	const w, h, left, bottom, top, right = 720, 420, 70, 50, 30, 250
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	xpos := func(x int) float64 { return float64(left) + pw*float64(x-1)/float64(max(maxX-1, 1)) }
	ypos := func(y float64) float64 { return float64(top) + ph*(1-y/(maxY*1.1)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">uvm bench: hits per producer (M/s) vs producers</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, h-bottom)
	for i := 0; i <= 5; i++ {
		y := maxY * 1.1 * float64(i) / 5
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.2f</text>`+"\n", left-6, ypos(y)+4, y)
	}
	xs := map[int]bool{}
	for _, s := range series {
		for _, p := range s {
			xs[p.x] = true
		}
	}
	for x := range xs {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", xpos(x), h-bottom+16, x)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">producers</text>`+"\n", left+int(pw/2), h-12)
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}
	keys := make([]string, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		s := series[k]
		sort.Slice(s, func(a, c int) bool { return s[a].x < s[c].x })
		c := colors[i%len(colors)]
		var pts []string
		for _, p := range s {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xpos(p.x), ypos(p.y)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", xpos(p.x), ypos(p.y), c)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), c)
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", w-right+10, top+16*(i+1), c, k)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
