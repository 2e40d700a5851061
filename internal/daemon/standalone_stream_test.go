package daemon

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// standaloneStream is a raw session's standalone event stream (its GET),
// read in the background: every data line it carried, in order.
type standaloneStream struct {
	mu    sync.Mutex
	lines []string
	grew  chan struct{} // closed and replaced when a line arrives
}

// openStandalone opens s's standalone stream and reads it until the test
// ends. It fails the test if the gateway does not open it.
func (s *rawSession) openStandalone() *standaloneStream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range s.header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		s.t.Fatalf("opening the standalone stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		s.t.Fatalf("opening the standalone stream: HTTP %d", resp.StatusCode)
	}
	st := &standaloneStream{grew: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				st.mu.Lock()
				st.lines = append(st.lines, strings.TrimSpace(data))
				close(st.grew)
				st.grew = make(chan struct{})
				st.mu.Unlock()
			}
		}
	}()
	s.t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	return st
}

// waitFor reports whether a data line containing want arrives within d.
func (st *standaloneStream) waitFor(want string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		st.mu.Lock()
		for _, l := range st.lines {
			if strings.Contains(l, want) {
				st.mu.Unlock()
				return true
			}
		}
		grew := st.grew
		st.mu.Unlock()
		select {
		case <-grew:
		case <-deadline:
			return false
		}
	}
}

// String is every data line the stream carried so far.
func (st *standaloneStream) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return strings.Join(st.lines, "\n")
}
