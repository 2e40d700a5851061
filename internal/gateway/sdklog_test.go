package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestSDKLoggerLowersUndelivered(t *testing.T) {
	for _, tt := range []struct {
		level   slog.Level
		msg     string
		want    string // "" for nothing logged
		wantLvl string
	}{
		{slog.LevelWarn, "calling notifications/tools/list_changed: rejected by transport: undelivered message: stream not connected", "", ""},
		{slog.LevelDebug - 4, "calling notifications/tools/list_changed: rejected by transport: undelivered message", "rejected by transport", "DEBUG"},
		{slog.LevelWarn, "calling notifications/message: connection closed", "connection closed", "WARN"},
	} {
		var buf bytes.Buffer
		base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
		l := sdkLogger(base.With("view", "default"))
		l.Warn(tt.msg)
		got := buf.String()
		if tt.want == "" {
			if got != "" {
				t.Errorf("level %v: got %q, want nothing logged", tt.level, got)
			}
			continue
		}
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "level="+tt.wantLvl) || !strings.Contains(got, "view=default") {
			t.Errorf("level %v: got %q, want %q at %s with the view", tt.level, got, tt.want, tt.wantLvl)
		}
	}
}

func TestUpstreamErrorDropsRepeatedPrefix(t *testing.T) {
	in := &jsonrpc.Error{Code: -32602, Message: "MCP error -32602: Invalid arguments for prompt args-prompt"}
	err := upstreamError("everything", fmt.Errorf("getting a prompt: %w", in))
	var out *jsonrpc.Error
	if !errors.As(err, &out) || out.Code != -32602 || out.Message != "Invalid arguments for prompt args-prompt" {
		t.Errorf("got %v, want code -32602 with the message once, without the prefix", err)
	}
	if in.Message != "MCP error -32602: Invalid arguments for prompt args-prompt" {
		t.Error("upstreamError changed the upstream's error")
	}
}
