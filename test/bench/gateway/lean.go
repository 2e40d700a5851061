package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
)

// serveLean forwards HTTP/1.1 requests to the upstream's host until stdin
// closes, without net/http's server or transport: each accepted
// connection gets its own connection to the upstream, and one goroutine
// per connection pair reads a request (http.ReadRequest), writes it
// upstream, reads the whole response (http.ReadResponse) and writes it
// back with its length. No background reads, no writer or reader
// goroutines, no per-request timers: it parses what a gateway must parse
// and does nothing else. It is a measuring device only (it assumes one
// request at a time per connection), and tells what forwarding costs when the HTTP
// layer is as thin as it can be while still parsing both messages.
func serveLean() error {
	return servePairs("lean", func(in, out net.Conn) {
		if err := leanForward(in, out); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			fmt.Fprintf(os.Stderr, "bench-gateway lean: %v\n", err)
		}
	})
}

// servePairs serves on a loopback port until stdin closes: each accepted
// connection gets its own connection to the upstream's host
// ($SWITCHBOARD_BENCH_UPSTREAM), and forward runs on the pair until it
// returns; both are then closed. At the end every open pair is closed and
// waited for. The relay and the thin forwarder differ only in forward.
func servePairs(role string, forward func(in, out net.Conn)) error {
	base := os.Getenv(envUpstream)
	target, err := url.Parse(base)
	if base == "" || err != nil || target.Host == "" {
		return fmt.Errorf("want %s set to the upstream's base URL, got %q", envUpstream, base)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	track := func(add bool, cs ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			if add {
				conns[c] = struct{}{}
			} else {
				delete(conns, c)
			}
		}
	}
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer in.Close()
				out, err := net.Dial("tcp", target.Host)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench-gateway %s: dialling the upstream: %v\n", role, err)
					return
				}
				defer out.Close()
				track(true, in, out)
				defer track(false, in, out)
				forward(in, out)
			})
		}
	})
	fmt.Printf("%s http://%s\n", lineReady, ln.Addr())
	p := &profiler{}
	serveCommands(os.Stdin, os.Stdout, p)
	p.stopQuietly()
	_ = ln.Close()
	mu.Lock()
	for c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	wg.Wait()
	return nil
}

// leanForward forwards requests from in to out and their responses back,
// one at a time, until either side closes; it returns why it stopped
// (io.EOF when the client closed between requests).
func leanForward(in, out net.Conn) error {
	inR, outR := bufio.NewReader(in), bufio.NewReader(out)
	inW, outW := bufio.NewWriter(in), bufio.NewWriter(out)
	for {
		req, err := http.ReadRequest(inR)
		if err != nil {
			return err
		}
		// req.Write sends the body with its length, or chunked when the
		// length is unknown, and the Host header from req.Host.
		if err := req.Write(outW); err != nil {
			return fmt.Errorf("writing the request upstream: %w", err)
		}
		if err := outW.Flush(); err != nil {
			return fmt.Errorf("writing the request upstream: %w", err)
		}
		resp, err := http.ReadResponse(outR, req)
		if err != nil {
			return fmt.Errorf("reading the upstream's response: %w", err)
		}
		err = leanRespond(inW, outR, resp)
		resp.Body.Close()
		if err != nil {
			return err
		}
	}
}

// leanRespond writes resp to w: with its length as it came, or without
// one (an event stream) chunked, each piece flushed as soon as no more of
// the response is already buffered in upstream, so that a stream's
// events are not held back and a complete response is written at once.
func leanRespond(w *bufio.Writer, upstream *bufio.Reader, resp *http.Response) error {
	chunked := resp.ContentLength < 0
	resp.Header.Del("Transfer-Encoding")
	if chunked {
		resp.Header.Set("Transfer-Encoding", "chunked")
	} else {
		resp.Header.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	fmt.Fprintf(w, "HTTP/1.1 %s\r\n", resp.Status)
	if err := resp.Header.Write(w); err != nil {
		return err
	}
	w.WriteString("\r\n")
	var body io.Writer = w
	var cw io.WriteCloser
	if chunked {
		cw = httputil.NewChunkedWriter(w)
		body = cw
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := body.Write(buf[:n]); werr != nil {
				return fmt.Errorf("writing the response: %w", werr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the upstream's response body: %w", err)
		}
		if upstream.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("writing the response: %w", err)
			}
		}
	}
	if cw != nil {
		cw.Close()
		w.WriteString("\r\n")
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the response: %w", err)
	}
	return nil
}
