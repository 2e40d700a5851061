package catalog

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A tool may declare an outputSchema; its results that are not errors must
// then carry structuredContent matching it (MCP 2025-06-18, "Output
// Schema"). Switchboard checks, and reports a mismatch beside the result,
// which it still passes on unchanged: the caller decides what to trust.

// compileOutput compiles the tool's output schema, if it declares one;
// failures are recorded on the tool, never returned.
func (t *Tool) compileOutput() {
	if t.Def == nil || t.Def.OutputSchema == nil {
		return
	}
	sch, err := compileSchema(t.Def.OutputSchema, "output schema", "switchboard:///output-schema.json")
	if err != nil {
		t.OutputSchemaError = err.Error()
		return
	}
	t.OutputSchema = sch
}

// ValidateOutput checks a result's structuredContent against the tool's
// output schema. A tool without one (or whose schema did not compile), and
// a result that is an error (isError), pass. Otherwise the error is a
// *fault.Error of kind Validation naming the server and tool, with one
// FieldDetail per problem, named by its path in structuredContent
// ("(structuredContent)" for the whole of it): what does not match, or
// that structuredContent is missing.
func (t Tool) ValidateOutput(structured any, isError bool) error {
	if t.OutputSchema == nil || isError {
		return nil
	}
	fe := fault.New(fault.Validation, "the result of %s/%s does not match the tool's output schema", t.Server, t.Def.Name).
		WithDetail("server", t.Server).WithDetail("tool", t.Def.Name)
	if structured == nil {
		fe.Fields = []fault.FieldDetail{{Field: "(structuredContent)",
			Message: "missing: the tool declares an output schema, so a result that is not an error must carry structuredContent"}}
		return fe
	}
	// Decode as the validator wants it (numbers as json.Number), whatever
	// decoded the result: the lean path's encoding/json or the SDK.
	raw, err := json.Marshal(structured)
	if err != nil {
		return fault.Wrap(fault.Validation, err, "the structuredContent of %s/%s is not JSON", t.Server, t.Def.Name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fault.Wrap(fault.Validation, err, "the structuredContent of %s/%s is not JSON", t.Server, t.Def.Name)
	}
	err = t.OutputSchema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fault.Wrap(fault.Validation, err, "checking the result of %s/%s against the tool's output schema", t.Server, t.Def.Name)
	}
	fe.Fields = fieldDetails(ve, doc, "(structuredContent)")
	for i := range fe.Fields {
		fe.Fields[i].Suggestion = "" // the server's to fix, not the caller's
		if fe.Fields[i].Message == msgMissing {
			fe.Fields[i].Message = "required by the output schema, but missing"
		}
	}
	return fe
}
