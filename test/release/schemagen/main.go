// Command schemagen writes GoReleaser's JSON Schema, generated from its
// configuration types exactly as `goreleaser jsonschema` does, so that the
// release test can validate .goreleaser.yaml without building GoReleaser.
// It is its own module, so that GoReleaser's dependencies never reach
// switchboard's go.mod. Regenerate after changing the pinned version:
//
//	make release-schema
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
	"github.com/invopop/jsonschema"
)

func main() {
	schema := jsonschema.Reflect(&config.Project{})
	schema.Definitions["FileInfo"] = jsonschema.Reflect(&config.FileInfo{})
	schema.Description = "goreleaser configuration definition file"
	out, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
