package modes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// hugeProtocol is the protocol version the "huge" server answers with.
const hugeProtocol = "2025-11-25"

// serveHuge is the "huge" mode: a server whose one tool, big {bytes},
// answers with a text of that many "x", written as it goes rather than
// built and encoded first. A test of how a client reads a message far
// larger than its limit needs the message from another process (so that
// the server's copy is not in the client's heap), but not from the SDK:
// the race-built SDK server spent about 90 ms of CPU per MiB encoding it.
// It answers initialize, tools/list, ping and tools/call; other requests
// get "method not found", and notifications nothing.
func serveHuge() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Bytes int `json:"bytes"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			fmt.Fprintf(os.Stderr, "huge: a line that is not JSON-RPC: %v\n", err)
			return
		}
		if req.ID == nil {
			continue
		}
		switch req.Method {
		case "initialize":
			writeResult(out, req.ID, `{"protocolVersion":"`+hugeProtocol+`","capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}`)
		case "tools/list":
			writeResult(out, req.ID, `{"tools":[{"name":"big","description":"Returns a large text.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}}]}`)
		case "ping":
			writeResult(out, req.ID, `{}`)
		case "tools/call":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
			writeX(out, req.Params.Arguments.Bytes)
			out.WriteString("\"}]}}\n")
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found: %s"}}`+"\n", req.ID, req.Method)
		}
		if err := out.Flush(); err != nil {
			return
		}
	}
}

// writeResult writes a response with result, which is JSON.
func writeResult(w io.Writer, id json.RawMessage, result string) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
}

// writeX writes n bytes of "x" to w.
func writeX(w io.Writer, n int) {
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
}
