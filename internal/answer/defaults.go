package answer

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Defaults returns the content of an elicitation form answered with the
// defaults its requested schema gives, or the name of the first required
// field (by name) that has none. err says the schema is not an object of
// properties.
func Defaults(schema any) (content map[string]any, missing string, err error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the requested schema: %w", err)
	}
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, "", fmt.Errorf("the requested schema is not an object of properties: %w", err)
	}
	required := append([]string(nil), s.Required...)
	sort.Strings(required)
	for _, r := range required {
		if p, ok := s.Properties[r]; !ok || p.Default == nil {
			return nil, r, nil
		}
	}
	content = map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	return content, "", nil
}
