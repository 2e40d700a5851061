package upstream

import "testing"

func TestStderrSummary(t *testing.T) {
	node := "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module '/nonexistent.js'\n" +
		"    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    at Module._load (node:internal/modules/cjs/loader:1038:27)\n" +
		"  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n"
	python := "Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n    import mcp\nModuleNotFoundError: No module named 'mcp'\n"
	tests := []struct{ name, in, want string }{
		{"node stack", node, "Error: Cannot find module '/nonexistent.js'"},
		{"python traceback", python, "ModuleNotFoundError: No module named 'mcp'"},
		{"go panic", "goroutine 1 [running]:\npanic: boom\n\nexit status 2\n", "panic: boom"},
		{"nothing that looks like an error", "starting\nlistening on stdio\nbye\n", "starting\nlistening on stdio\nbye"},
		{"last lines only", "a\nb\nc\nd\n", "b\nc\nd"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stderrSummary(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
