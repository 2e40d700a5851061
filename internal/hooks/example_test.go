package hooks_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// An Engine runs the configured hooks of the events it is given. Fire runs the hooks of
// one event and waits for their report; a command action runs a real program, here
// echo, with its arguments rendered from the event's fields.
func ExampleEngine_Fire() {
	yaml := `hooks:
  - name: announce
    on: deploy.*
    if:
      env: production
    actions:
      - type: command
        command: [echo, "deployed {version} to {env}"]
  - name: staging-only
    on: deploy.*
    if:
      env: staging
    actions:
      - type: command
        command: [echo, "not run"]
`
	// No file name: hooks from a repository-local file would run only once the file is
	// trusted (see NeedsTrust and Trust).
	cfg, err := config.Parse("", []byte(yaml), config.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := hooks.New(hooks.Options{
		Config: cfg,
		// The standard context (branch, repo, ...) comes from git; a fixed one here.
		Describe: func(context.Context, string) (vcs.Info, error) { return vcs.Info{Branch: "main"}, nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = eng.Run(ctx) }()
	defer wg.Wait()
	defer cancel()

	rep, err := eng.Fire(ctx, "deploy.done", map[string]any{"env": "production", "version": "1.4.2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("blocked:", rep.Blocked, "failed:", rep.Failed)
	for _, r := range rep.Runs {
		fmt.Println(r.Hook, r.Status, r.Output)
	}
	// Output:
	// blocked: false failed: false
	// announce success deployed 1.4.2 to production
}
