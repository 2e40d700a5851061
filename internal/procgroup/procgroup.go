// Package procgroup starts child processes in a process group of their own,
// with an environment of their own (Env), and stops the whole group: stdio
// MCP servers and hook commands fork (npx, uvx, docker, shell scripts),
// and stopping only the leader would leave the rest running. On Linux a group started with DieWithParent also
// dies with switchboard, however switchboard dies.
//
// Windows has neither process-group signals nor a parent-death signal:
// there the functions act on the process alone.
package procgroup
