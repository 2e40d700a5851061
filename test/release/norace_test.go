//go:build !race

package release

// raceEnabled is whether this test binary was built with -race.
const raceEnabled = false
