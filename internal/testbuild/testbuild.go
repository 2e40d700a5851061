// Package testbuild says how the running test binary was built, so that
// the test helpers that build programs for tests to run (the test server
// program of package testserver, the go-sdk's conformance server of
// package testpeer) build them the same way: with -race when the test
// binary has it, they link the race-compiled packages the test build put
// in the build cache already, where a plain build compiles the standard
// library's net/http and crypto and the go-sdk a second time on a cold
// cache (about 30 s of CPU; docs/decisions.md, "The test suite's child
// processes").
package testbuild

import "runtime/debug"

// RaceEnv is the GORACE setting for a race-built program a test starts:
// without it, the program sleeps a second at exit (atexit_sleep_ms).
const RaceEnv = "atexit_sleep_ms=0"

// Flags returns the go build flags that match how this test binary was
// built: -race and -tags, as they were given.
func Flags() []string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var flags []string
	for _, s := range info.Settings {
		switch s.Key {
		case "-race":
			if s.Value == "true" {
				flags = append(flags, "-race")
			}
		case "-tags":
			flags = append(flags, "-tags="+s.Value)
		}
	}
	return flags
}
