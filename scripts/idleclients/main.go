// Command idleclients opens many keep-alive HTTP connections to a proxy,
// sends one request on each, reads its response, and then holds every
// connection open and idle until it is stopped: the load behind the
// idle-client memory measurement (scripts/bench-idlemem.sh).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "proxy address")
	n := flag.Int("n", 1000, "connections")
	flag.Parse()
	conns := make([]net.Conn, 0, *n)
	req := []byte("GET / HTTP/1.1\r\nHost: idle\r\n\r\n")
	for i := 0; i < *n; i++ {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "idleclients: connection %d: %v\n", i, err)
			os.Exit(1)
		}
		if _, err := c.Write(req); err != nil {
			fmt.Fprintf(os.Stderr, "idleclients: connection %d: %v\n", i, err)
			os.Exit(1)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "idleclients: connection %d: %v\n", i, err)
			os.Exit(1)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conns = append(conns, c)
	}
	fmt.Println("ready", len(conns))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	for _, c := range conns {
		c.Close()
	}
}
