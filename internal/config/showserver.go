package config

import (
	"reflect"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// MarshalServer renders one server as `switchboard config show` renders it
// under servers: (native YAML, every value resolved), with its secrets
// hidden: environment values, header values, URL credentials and
// secret-looking arguments, as [Config.Redacted] hides them.
func MarshalServer(s Server) []byte {
	red := redactServer(s)
	red.Docker = nil // show the launch it really gets: docker run ...
	w := &yamlWriter{}
	w.value(false, 0, "servers", reflect.ValueOf([]schema.Server{serverOf(red)}))
	return w.bytes()
}
