package upstream

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// BenchmarkStderrFlood measures what a stdio server that floods its stderr
// costs the daemon: the CPU this process spends (getrusage of the process
// itself: the child's CPU is not counted) per MiB the child writes, and
// how fast the child gets to write it (MiB/s, child start included).
// Readers of the same flood, side by side:
//
//   - "floor-discard": os/exec's io.Copy of the pipe to io.Discard (8 KiB
//     reads), the cost of just reading the pipe through the Go poller;
//   - "floor-64k": the same, 64 KiB reads;
//   - "tail-os-exec": os/exec's copy into the stderr tail (how every
//     stdio child's stderr was read before stderrPipe, and still is on
//     other systems than Linux);
//   - "tail": the product's path (processTransport.Connect's), the tail
//     fed by a stderrPipe where there is one.
//
// Two writers: "line", one write(2) per 100-byte line, as an unbuffered
// logger does; "chunk", 64 KiB writes, as `yes` does.
func BenchmarkStderrFlood(b *testing.B) {
	const total = 32 << 20
	readers := []struct {
		name string
		w    func() io.Writer
		pipe bool
	}{
		{"floor-discard", func() io.Writer { return io.Discard }, false},
		{"floor-64k", func() io.Writer { return &discard64k{} }, false},
		{"tail-os-exec", func() io.Writer { return newTailBuffer(0) }, false},
		{"tail", func() io.Writer { return newTailBuffer(0) }, true},
	}
	for _, write := range []string{"line", "chunk"} {
		srv := testserver.Server(b, "flood", "stderr-flood", fmt.Sprintf("%s=bytes=%d,write=%s", testserver.EnvFlood, total, write))
		for _, r := range readers {
			b.Run(write+"/"+r.name, func(b *testing.B) {
				var cpu, wall time.Duration
				runs := 0
				for b.Loop() {
					cmd, err := commandFor(srv, r.w())
					if err != nil {
						b.Fatal(err)
					}
					var stderr *stderrPipe
					if r.pipe {
						stderr = pipeStderr(cmd)
					}
					cpu0, start := selfCPU(b), time.Now()
					if err := cmd.Start(); err != nil {
						stderr.abort()
						b.Fatal(err)
					}
					stderr.run()
					err = cmd.Wait()
					stderr.finish(cmd.WaitDelay)
					wall += time.Since(start)
					cpu += selfCPU(b) - cpu0
					runs++
					if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 {
						b.Fatalf("the flood ended with %v, want exit status 2", err)
					}
				}
				mib := float64(runs) * total / (1 << 20)
				b.ReportMetric(float64(cpu.Microseconds())/1000/mib, "cpu-ms/MiB")
				b.ReportMetric(mib/wall.Seconds(), "MiB/s")
			})
		}
	}
}

// selfCPU is the CPU time this process has used, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discard64k reads what is copied to it 64 KiB at a time and keeps none
// of it: the least reading a pipe can cost.
type discard64k struct{ buf [64 << 10]byte }

func (d *discard64k) Write(p []byte) (int, error) { return len(p), nil }

func (d *discard64k) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for {
		m, err := r.Read(d.buf[:])
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
