//go:build !unix

package oauth

// lockFile is a no-op where flock is not available: a process still
// serialises its own refreshes, and a refresh re-reads the store first.
func lockFile(string) (func(), error) { return func() {}, nil }
