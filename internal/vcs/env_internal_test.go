// Internal on purpose: tests cleanEnv, the environment every git command runs with, over variables a test cannot make a surrounding git set.

package vcs

import (
	"slices"
	"testing"
)

func TestCleanEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANGUAGE=de",
		"GIT_DIR=/other/.git", "GIT_WORK_TREE=/other", "GIT_INDEX_FILE=/other/.git/index",
		"GIT_OBJECT_DIRECTORY=/o", "GIT_COMMON_DIR=/c", "GIT_PREFIX=sub/", "GIT_AUTHOR_DATE=@1 +0000",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/x",
		"GIT_SSH_COMMAND=ssh -i key", "GIT_CONFIG_GLOBAL=/g", "GIT_ASKPASS=/a",
	}
	got := cleanEnv(environ, []string{"SWITCHBOARD_HOOK_DEPTH=2"})
	want := []string{
		"PATH=/usr/bin", "HOME=/home/u",
		"GIT_SSH_COMMAND=ssh -i key", "GIT_CONFIG_GLOBAL=/g", "GIT_ASKPASS=/a",
		"LANGUAGE=en", "GIT_TERMINAL_PROMPT=0", "SWITCHBOARD_HOOK_DEPTH=2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
