package vcs

// The black-box tests (package vcs_test) check the hook scripts InstallHooks writes by their
// first line, and write scripts of their own quoting paths as the package does.

// HookMarker starts the second line of every hook script Switchboard installs.
const HookMarker = marker

// ShellQuote quotes a string for /bin/sh as the installed hook scripts do.
var ShellQuote = shellQuote
