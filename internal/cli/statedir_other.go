//go:build !unix

package cli

// checkStateDir has nothing to check where permissions are ACLs the
// directory inherits from the user's profile.
func (a *app) checkStateDir(string) error { return nil }
