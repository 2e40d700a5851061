package vcs

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// CreateBranch creates the branch name at HEAD in the repository at dir and
// checks it out (`git switch -c`), as the spec workflow does when it starts
// a feature. The working tree and index are left as they are: the new
// branch points at the commit already checked out. A name git does not
// accept as a branch name, or one that exists, is a fault.Validation error.
func CreateBranch(ctx context.Context, dir, name string) error {
	if err := checkBranchName(ctx, dir, name); err != nil {
		return err
	}
	exists, err := refExists(ctx, dir, "refs/heads/"+name)
	if err != nil {
		return err
	}
	if exists {
		return fault.New(fault.Validation, "branch %q already exists", name).
			WithDetail("branch", name).
			WithSuggestions("Choose another branch name, or check out the existing branch with `git switch " + name + "`")
	}
	if _, err := run(ctx, dir, nil, "switch", "--quiet", "--create", name); err != nil {
		return failed(err, "creating branch %q", name)
	}
	return nil
}

// Commit commits what is staged in the repository at dir with message and
// returns the new commit's full sha. The message is kept as given apart
// from surrounding blank lines and trailing spaces (lines starting with "#"
// are kept). The repository's own commit hooks run. An empty message or an
// empty index (nothing staged) is a fault.Validation error.
func Commit(ctx context.Context, dir, message string) (sha string, err error) {
	if strings.TrimSpace(message) == "" {
		return "", fault.New(fault.Validation, "a commit message cannot be empty").
			WithDetail("field", "message")
	}
	// Exit 0: nothing staged; 1: staged changes. Works before the first commit too.
	_, err = run(ctx, dir, nil, "diff", "--cached", "--quiet", "--ignore-submodules=none")
	switch code, ok := exitCode(err); {
	case err == nil:
		return "", fault.New(fault.Validation, "nothing is staged to commit in %s", dir).
			WithSuggestions("Stage changes with `git add` before the commit action runs")
	case ok && code == 1:
	default:
		return "", failed(err, "reading the staged changes of %s", dir)
	}
	if _, err := run(ctx, dir, []byte(message), "commit", "--quiet", "--cleanup=whitespace", "--file=-"); err != nil {
		return "", failed(err, "committing in %s", dir)
	}
	out, err := run(ctx, dir, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", failed(err, "reading the new commit in %s", dir)
	}
	return strings.TrimSpace(out), nil
}

// Tag tags HEAD of the repository at dir: an annotated tag carrying message
// when message is not empty, else a lightweight tag. A name git does not
// accept, or one that exists, is a fault.Validation error.
func Tag(ctx context.Context, dir, name, message string) error {
	if name == "" || strings.HasPrefix(name, "-") {
		return invalidRef("tag", name)
	}
	if _, err := run(ctx, dir, nil, "check-ref-format", "refs/tags/"+name); err != nil {
		if _, ok := exitCode(err); ok {
			return invalidRef("tag", name)
		}
		return err
	}
	exists, err := refExists(ctx, dir, "refs/tags/"+name)
	if err != nil {
		return err
	}
	if exists {
		return fault.New(fault.Validation, "tag %q already exists", name).WithDetail("tag", name)
	}
	if message == "" {
		_, err = run(ctx, dir, nil, "tag", name)
	} else {
		_, err = run(ctx, dir, []byte(message), "tag", "--annotate", "--cleanup=whitespace", "--file=-", name)
	}
	if err != nil {
		return failed(err, "creating tag %q", name)
	}
	return nil
}

// checkBranchName accepts name only when git takes it literally as a
// branch name: `git check-ref-format --branch` also expands "@{-1}" and
// the like, which an action's templated name must not do.
func checkBranchName(ctx context.Context, dir, name string) error {
	if name == "" || strings.HasPrefix(name, "-") {
		return invalidRef("branch", name)
	}
	out, err := run(ctx, dir, nil, "check-ref-format", "--branch", name)
	if err != nil {
		if _, ok := exitCode(err); ok {
			return invalidRef("branch", name)
		}
		return err
	}
	if strings.TrimSpace(out) != name {
		return invalidRef("branch", name)
	}
	return nil
}

// invalidRef is the error for a branch or tag name git does not accept.
func invalidRef(what, name string) error {
	return &fault.Error{
		Kind:    fault.Validation,
		Message: fmt.Sprintf("invalid %s name %q", what, name),
		Fields: []fault.FieldDetail{{
			Field: what, Message: "not a valid git " + what + " name (see `git help check-ref-format`)",
			ReceivedValue: name, Received: true,
		}},
	}
}

// refExists reports whether the full ref name exists in dir's repository.
func refExists(ctx context.Context, dir, ref string) (bool, error) {
	_, err := run(ctx, dir, nil, "show-ref", "--verify", "--quiet", ref)
	switch code, ok := exitCode(err); {
	case err == nil:
		return true, nil
	case ok && code == 1:
		return false, nil
	default:
		return false, failed(err, "looking up %s in %s", ref, dir)
	}
}
