package main

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards TCP connections from a loopback port to a target address. cut closes the listener
// and every live connection (the target looks gone: new connections are refused, open ones drop);
// restore listens on the same port again.
type tcpProxy struct {
	target string
	addr   string // the proxy's host:port, the same across cut and restore

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup // the accept loop and every pipe
}

// newTCPProxy starts a proxy to target on a free loopback port; it is cut when the test ends.
func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by cut
			}
			p.wg.Add(1)
			go p.pipe(c)
		}
	}()
}

// pipe copies both ways between c and a new connection to the target until either side ends.
func (p *tcpProxy) pipe(c net.Conn) {
	defer p.wg.Done()
	u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, u) {
		_ = c.Close()
		_ = u.Close()
		return
	}
	defer p.untrack(c, u)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(u, c)
		_ = u.Close()
		_ = c.Close()
		close(done)
	}()
	_, _ = io.Copy(c, u)
	_ = c.Close()
	_ = u.Close()
	<-done
}

// track records live connections; it refuses them (false) once the proxy is cut.
func (p *tcpProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *tcpProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// cut closes the listener and every live connection and waits until no goroutine of the proxy runs.
// Cutting a cut proxy does nothing.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// restore listens on the proxy's port again, retrying for up to ten seconds should the port still be
// held.
func (p *tcpProxy) restore(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen again on %s: %v", p.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTCPProxyCutAndRestore checks the proxy the outage test relies on: it forwards, cut drops live
// connections and refuses new ones, restore accepts again on the same port.
func TestTCPProxyCutAndRestore(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	p := newTCPProxy(t, echo.Addr().String())
	roundTrip := func(c net.Conn) error {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		if string(b) != "ping" {
			t.Fatalf("echo through the proxy: %q", b)
		}
		return nil
	}
	live, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := roundTrip(live); err != nil {
		t.Fatal(err)
	}
	p.cut()
	if err := roundTrip(live); err == nil {
		t.Fatal("a live connection still works after cut")
	}
	if c, err := net.Dial("tcp", p.addr); err == nil {
		c.Close()
		t.Fatal("a new connection was accepted after cut")
	}
	p.restore(t)
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}
