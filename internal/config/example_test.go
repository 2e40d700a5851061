package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// Load reads switchboard.yaml, expands ${VAR} references through Options.LookupEnv and
// returns the configuration resolved: defaults filled in, every field checked.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "config-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "switchboard.yaml")
	yaml := `servers:
  - name: remote
    transport: http
    url: https://mcp.example.com/mcp
    headers:
      Authorization: "Bearer ${API_TOKEN}"
    request_timeout: 1m
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	env := map[string]string{"API_TOKEN": "t0ken"}
	cfg, err := config.Load(path, config.Options{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := cfg.Servers[0]
	fmt.Println(s.Name, s.Transport, s.URL, s.RequestTimeout)
	fmt.Println(s.Headers["Authorization"])
	// Output:
	// remote http https://mcp.example.com/mcp 1m0s
	// Bearer t0ken
}

// Every problem in a file is reported at once, each at its line and column, as a
// *ValidationError.
func ExampleParse_validationError() {
	yaml := `servers:
  - name: github
    transport: htpp
    url: https://api.example.com/mcp
`
	_, err := config.Parse("switchboard.yaml", []byte(yaml), config.Options{})
	var verr *config.ValidationError
	fmt.Println(errors.As(err, &verr))
	fmt.Println(err)
	// Output:
	// true
	// switchboard.yaml:3:16: servers.github.transport: unknown transport "htpp"; did you mean "http"?
}
