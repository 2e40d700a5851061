package taskapi

// The black-box tests (package taskapi_test) check that the router serves exactly the
// operations the OpenAPI document lists, and that validation errors carry the package's
// suggestions word for word: these lend them the route table and the suggestion texts.

// Routes returns the "METHOD /path" of every route the handler serves.
func Routes() []string {
	var out []string
	for _, rt := range routes {
		out = append(out, rt.method+" "+rt.path)
	}
	return out
}

// The suggestions of validation errors.
const (
	SuggestTitle    = suggestTitle
	SuggestPriority = suggestPriority
	SuggestDueDate  = suggestDueDate
	SuggestDesc     = suggestDesc
)
