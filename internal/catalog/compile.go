package catalog

import "github.com/modelcontextprotocol/go-sdk/mcp"

// CompileTool returns def, a tool of server that is not in the catalog
// (one an owned per_client session lists for its own client), with its
// input and output schemas compiled as the catalog compiles its own; a
// schema that does not compile is recorded on the tool (SchemaError,
// OutputSchemaError), never returned. Exposed is left empty.
func CompileTool(server string, def *mcp.Tool) Tool {
	return compileTool(server, def)
}
