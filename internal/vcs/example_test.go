package vcs_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// ExampleDescribe reads the git context of a working tree: who works in
// it, on which branch and spec-workflow feature, in which repository.
func ExampleDescribe() {
	dir, err := os.MkdirTemp("", "vcs-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=feature/003-user-auth"},
		{"config", "user.name", "Ada"},
		{"config", "user.email", "ada@example.com"},
		{"remote", "add", "origin", "git@github.com:octo/hello.git"},
		{"commit", "--quiet", "--allow-empty", "-m", "first"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			log.Fatalf("git %v: %v: %s", args, err, out)
		}
	}

	info, err := vcs.Describe(context.Background(), dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("user:", info.User)
	fmt.Println("branch:", info.Branch)
	fmt.Println("feature:", info.Feature)
	fmt.Println("repo:", info.Repo)
	fmt.Println("head is a full sha:", len(info.Head) == 40)
	// Output:
	// user: Ada
	// branch: feature/003-user-auth
	// feature: 003-user-auth
	// repo: octo/hello
	// head is a full sha: true
}
