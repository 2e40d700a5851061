// Package testpeer starts the npm MCP peers (server-everything, server-memory,
// server-filesystem) for tests, so that Switchboard is checked against real
// servers written with another implementation of MCP (the TypeScript SDK),
// not only against itself.
//
// The peers are not committed. test/peers/package.json pins exact versions and
// test/peers/package-lock.json pins the whole tree; `make peers` (run by
// `make test`) installs them into test/peers/node_modules with
// `npm ci --prefix test/peers`. When they are missing or older than the lock
// file, every function here fails the test with that command: a test that
// needs a peer never skips silently. The @modelcontextprotocol/sdk package
// installed next to them is there for tests that need a real non-Go client.
//
// Peers run as `node <package>/dist/index.js ...`, with no shell and no npx;
// [EverythingCommand], [MemoryCommand] and [FilesystemCommand] return that
// command for a stdio transport, and [StartEverything] runs server-everything
// over HTTP for the length of a test ([StartRestartableEverything] also
// restarts it on its port). The package is for Unix test code: it
// runs children in their own process group and kills the group on cleanup.
//
// [Shared] hands one peer to every test of a binary that asks for it
// (started on first use, stopped by [StopShared] from TestMain), for tests
// whose point is not a fresh process: a node peer costs about a second of
// CPU to start.
//
// [StartOAuthExample] runs the TypeScript SDK's example server with OAuth
// (dist/esm/examples/server/simpleStreamableHttp.js --oauth, optionally
// --oauth-strict): an MCP server behind bearer auth and a demo
// authorization server that approves every sign-in at once.
//
// [StartSSEPolling] runs the TypeScript SDK's ssePollingExample.js, a
// server that closes a call's event stream mid-call for the client to
// resume with Last-Event-ID.
//
// [RunTSClient] is the other side: it runs the TypeScript SDK's client
// (test/peers/mcp-client.mjs on @modelcontextprotocol/sdk) against a server
// or the gateway, over streamable HTTP, SSE or stdio. A test gives it the
// target, the capabilities to declare (sampling, elicitation, roots) and a
// list of steps ([TSStep]); it returns one [TSResult] per step, between a
// connect line and a summary of the notifications and server requests the
// client saw. The SDK's client runs notification handlers a tick after the
// message arrives but settles a response at once, so a call often misses its
// last progress notification (it then shows in the summary's errors as
// "unknown token"): a tool sending N notifications yields N-1 or N.
//
// # What the pinned versions do
//
// Checked against @modelcontextprotocol/server-everything 2026.8.31 (server
// name "mcp-servers/everything", version "2.0.0"), server-memory and
// server-filesystem 2026.8.31 and @modelcontextprotocol/sdk 1.32.2, on Node 20.
//
// server-everything picks its transport from its first argument, default stdio:
//
//   - stdio: `node dist/index.js stdio`. Prints "Starting default (STDIO)
//     server..." to stderr and serves at once; exits when stdin is closed
//     (and on SIGINT).
//   - SSE (the 2024-11-05 HTTP+SSE transport): `PORT=N node dist/index.js sse`.
//     GET /sse opens the event stream, whose first event is "endpoint" with
//     data "/message?sessionId=ID"; clients POST to /message?sessionId=ID.
//     Prints "Starting SSE server..." and then "Server is running on port N"
//     to stderr. It listens on all interfaces (not only loopback); PORT
//     defaults to 3001.
//   - Streamable HTTP: `PORT=N node dist/index.js streamableHttp`, endpoint
//     /mcp (POST messages, GET the server's event stream, DELETE ends the
//     session; sessions in the Mcp-Session-Id header, resumable with
//     Last-Event-ID). Prints "Starting Streamable HTTP server..." and one
//     line per request to stdout, and "MCP Streamable HTTP Server listening
//     on port N" to stderr. A GET /mcp without a session answers 400 with a
//     JSON-RPC error (code -32000), and so does any request for a session
//     it does not have ("Bad Request: No valid session ID provided"; the
//     specification says 404), as after a restart. Also all interfaces,
//     PORT default 3001.
//
// Neither HTTP mode's "ready" line can be trusted: Express calls the listen
// callback on a failed listen too, so both print it when the port is taken.
// Then streamableHttp adds "Failed to start: Port N is already in use..." and
// exits 1, while sse exits 0 without another word. [StartEverything]
// therefore waits until the child process itself holds a socket listening on
// its port, and picks a new port when the child exits first.
//
// It advertises tools (listChanged), prompts (listChanged), resources
// (subscribe, listChanged), logging, completions and tasks. Twelve tools are
// there from the start: echo, get-annotated-message, get-env,
// get-resource-links, get-resource-reference, get-structured-content,
// get-sum, get-tiny-image, gzip-file-as-resource, toggle-simulated-logging,
// toggle-subscriber-updates and trigger-long-running-operation (progress
// notifications when the call has a progress token).
//
// The others are registered when the client's notifications/initialized
// arrives, each announced by its own notifications/tools/list_changed, and
// depend on the capabilities the client declared:
//
//   - simulate-research-query: always (a task tool: taskSupport "required");
//   - get-roots-list: roots (the Go SDK client declares roots by default);
//   - trigger-elicitation-request: elicitation;
//   - trigger-url-elicitation: elicitation.url;
//   - trigger-sampling-request: sampling;
//   - trigger-sampling-request-async: sampling and tasks.requests.sampling.createMessage;
//   - trigger-elicitation-request-async: elicitation and tasks.requests.elicitation.create.
//
// So a Go SDK client with no handlers sees 14 tools, one with a sampling and
// an elicitation handler 16, and one declaring everything 19. A tools/list
// sent right behind notifications/initialized can still get the first 12 or
// 13; wait for list_changed or poll. Over streamable HTTP the list_changed
// notifications go out before a client has opened its GET stream and are
// lost, so there only polling works.
//
// With roots declared, the server sends roots/list 350 ms after initialize.
// Over stdio it exits when stdin closes only once nothing is pending, and its
// own requests wait up to 60 s for an answer: a client that closes stdin
// before answering that roots/list (e.g. in the first half second) leaves it
// running until it is signalled. The Go SDK's CommandTransport then waits its
// TerminateDuration (default 5 s) before SIGTERM, which ends it at once.
// Declaring no roots, or a short TerminateDuration, avoids the wait.
//
// Prompts: simple-prompt, args-prompt, completable-prompt, resource-prompt.
// Resources: seven static documents demo://resource/static/document/*.md;
// templates demo://resource/dynamic/text/{resourceId} and
// demo://resource/dynamic/blob/{resourceId}.
//
// server-memory (stdio only) prints "Knowledge Graph MCP Server running on
// stdio" to stderr. It keeps its graph in the file MEMORY_FILE_PATH, by
// default memory.jsonl inside its own dist folder in node_modules; the
// command from [MemoryCommand] points it at a file in the test's temporary
// directory instead.
//
// server-filesystem (stdio only) takes its allowed directories as arguments
// and prints "Secure MCP Filesystem Server running on stdio" to stderr.
// Without arguments it waits for the client's roots, and has nothing it may
// touch if the client has none. When the client declares the roots
// capability, the server asks for roots/list after initialize (and again on
// roots/list_changed); a non-empty list of existing directories replaces the
// ones given as arguments, an empty one (the Go SDK's default) keeps them.
package testpeer
