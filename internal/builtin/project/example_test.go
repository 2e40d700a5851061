package project_test

import (
	"context"
	"fmt"
	"log"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
)

// ExampleCommitMessageFor drafts a Conventional Commits message from a
// diff, without a model (CommitDeps.LLM nil): the rules pick the type and
// scope from the paths and the change.
func ExampleCommitMessageFor() {
	diff := `diff --git a/internal/auth/token.go b/internal/auth/token.go
index 1111111..2222222 100644
--- a/internal/auth/token.go
+++ b/internal/auth/token.go
@@ -10,3 +10,7 @@ func Parse(s string) (Token, error) {
 	if s == "" {
 		return Token{}, errEmpty
 	}
+	if len(s) > maxLen {
+		return Token{}, errTooLong
+	}
+	// Tokens longer than maxLen are refused.
 	return decode(s)
`
	resp, err := project.CommitMessageFor(context.Background(), project.CommitDeps{}, project.CommitRequest{SinceDiff: diff})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.CommitMessage.Title)
	// Output:
	// fix(auth): update token.go
}
