// Command httpdet runs a net/http server and eight concurrent clients in
// one process over uvm's in-kernel loopback: each client makes five
// requests (GET with a query, POST with a body, keep-alive reuse) and the
// server answers with what it saw. Printed in client order, so the output
// is the same on Linux whatever the scheduling; under `uvm run --det` the
// whole run, the interleaving included, is the same every time
// (--trace-hash).
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	served := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		served++
		mu.Unlock()
		w.Header().Set("X-Method", r.Method)
		fmt.Fprintf(w, "%s q=%s body=%q len=%d", r.Method, r.URL.Query().Get("q"), body, r.ContentLength)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	base := "http://" + l.Addr().String()

	const clients, requests = 8, 5
	results := make([][]string, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for i := range requests {
				var resp *http.Response
				var err error
				if i%2 == 0 {
					resp, err = cl.Get(fmt.Sprintf("%s/echo?q=c%d-%d", base, c, i))
				} else {
					resp, err = cl.Post(base+"/echo?q=post", "text/plain", strings.NewReader(strings.Repeat(fmt.Sprint(c), i*100)))
				}
				if err != nil {
					results[c] = append(results[c], "error: "+err.Error())
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				s := string(b)
				if len(s) > 60 {
					s = s[:60] + "…"
				}
				results[c] = append(results[c], fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Method"), s))
			}
		}()
	}
	wg.Wait()
	for c, rs := range results {
		for _, r := range rs {
			fmt.Printf("client %d: %s\n", c, r)
		}
	}
	srv.Close()
	fmt.Println("served", served)
}
