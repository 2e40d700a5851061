package config

import "strings"

// BadFiles are configurations with problems, each with the exact lines
// Parse must report, in order.
var BadFiles = []struct {
	Name string
	File string
	Src  string
	Want []string
}{
	{
		Name: "yaml syntax",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    args: [x, y
`,
		Want: []string{
			"testdata/bad.yaml:3:11: invalid YAML: sequence end token ']' not found",
		},
	},
	{
		Name: "json syntax",
		File: "testdata/bad.json",
		Src: `{
  "mcpServers": {
    "a": {"command": "npx" "args": []}
  }
}
`,
		Want: []string{
			"testdata/bad.json:3:28: invalid JSON: ',' or '}' must be specified",
		},
	},
	{
		Name: "root list",
		File: "testdata/bad.yaml",
		Src: `- a
- b
`,
		Want: []string{
			"testdata/bad.yaml:1:1: the configuration must be a mapping, not a list; start it with servers:",
		},
	},
	{
		Name: "two docs",
		File: "testdata/bad.yaml",
		Src: `servers: []
---
servers: []
`,
		Want: []string{
			"testdata/bad.yaml:3:1: the file holds more than one YAML document; keep only one (remove the --- separator)",
		},
	},
	{
		Name: "servers string",
		File: "testdata/bad.yaml",
		Src: `servers: github
`,
		Want: []string{
			"testdata/bad.yaml:1:10: servers: must be a list of servers, not a string; start each server with \"- name: ...\"",
		},
	},
	{
		Name: "server not map",
		File: "testdata/bad.yaml",
		Src: `servers:
  - github
`,
		Want: []string{
			"testdata/bad.yaml:2:5: servers[0]: each server must be a mapping, not a string",
		},
	},
	{
		Name: "top typo",
		File: "testdata/bad.yaml",
		Src: `server:
  - name: a
    command: npx
`,
		Want: []string{
			"testdata/bad.yaml:1:1: server: unknown field \"server\"; did you mean \"servers\"?",
		},
	},
	{
		Name: "misspelt required key",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    comand: npx
  - name: b
    transport: http
    urll: https://x
`,
		Want: []string{
			"testdata/bad.yaml:3:5: servers.a.comand: unknown field \"comand\"; did you mean \"command\"?",
			"testdata/bad.yaml:6:5: servers.b.urll: unknown field \"urll\"; did you mean \"url\"?",
		},
	},
	{
		// A key of defaults: written in a server, where it has another
		// name (the schema's x-aliases), even misspelt.
		Name: "a name of the key in another block",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    connect_timeout: 5s
  - name: b
    command: npx
    conect_timeout: 5s
`,
		Want: []string{
			"testdata/bad.yaml:4:5: servers.a.connect_timeout: unknown field \"connect_timeout\"; did you mean \"timeout\"?",
			"testdata/bad.yaml:7:5: servers.b.conect_timeout: unknown field \"conect_timeout\"; did you mean \"timeout\"?",
		},
	},
	{
		Name: "swapped letters",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: b
    transport: http
    ulr: https://x
`,
		Want: []string{
			"testdata/bad.yaml:4:5: servers.b.ulr: unknown field \"ulr\"; did you mean \"url\"?",
		},
	},
	{
		Name: "field typo",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: github
    command: npx
    urll: https://x
    colour: red
`,
		Want: []string{
			"testdata/bad.yaml:4:5: servers.github.urll: unknown field \"urll\"; did you mean \"url\"?",
			"testdata/bad.yaml:5:5: servers.github.colour: unknown field \"colour\"; remove it; docs/configuration.md lists the fields",
		},
	},
	{
		Name: "names",
		File: "testdata/bad.yaml",
		Src:  "servers:\n  - command: npx\n  - name: my server\n    command: npx\n  - name: " + strings.Repeat("a", 65) + "\n    command: npx\n  - name: gh\n    command: npx\n  - name: gh\n    command: uvx\n",
		Want: []string{
			"testdata/bad.yaml:2:5: servers[0].name: name is required; add name: with a unique name, e.g. name: github",
			"testdata/bad.yaml:3:11: servers[1].name: name \"my server\" may only contain letters, digits, _ and -; rename it, e.g. \"my-server\"",
			"testdata/bad.yaml:5:11: servers[2].name: name is longer than 64 characters; shorten it",
			"testdata/bad.yaml:9:11: servers.gh.name: duplicate server name \"gh\" (first defined at testdata/bad.yaml:7:5); give each server a unique name",
		},
	},
	{
		Name: "missing required",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
  - name: b
    transport: http
  - name: c
    transport: websocket
  - name: d
    docker: {container_name: x}
`,
		Want: []string{
			"testdata/bad.yaml:2:5: servers.a.command: command is required by the stdio transport; add the command that starts the server, e.g. command: npx",
			"testdata/bad.yaml:3:5: servers.b.url: url is required by the http transport; add url: https://example.com/mcp",
			"testdata/bad.yaml:5:5: servers.c.url: url is required by the websocket transport; add url: wss://example.com/mcp",
			"testdata/bad.yaml:8:5: servers.d.docker.image: image is required by docker; add image: with the image to run, e.g. image: mcp/github",
		},
	},
	{
		Name: "wrong transport fields",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    url: https://x
    headers: {A: b}
  - name: b
    transport: http
    url: https://x
    command: npx
    env: {A: b}
  - name: c
    transport: sse
    url: https://x
    terminate_on_close: false
  - name: d
    transport: websocket
    url: wss://x
    sse_read_timeout: 5s
  - name: e
    transport: htpp
    url: https://x
`,
		Want: []string{
			"testdata/bad.yaml:4:5: servers.a.url: url is not used by the stdio transport; remove it, or set transport: http",
			"testdata/bad.yaml:5:5: servers.a.headers: headers is not used by the stdio transport; remove it, or set transport: http",
			"testdata/bad.yaml:9:5: servers.b.command: command is not used by the http transport; remove it, or set transport: stdio",
			"testdata/bad.yaml:10:5: servers.b.env: env is not used by the http transport; remove it, or set transport: stdio",
			"testdata/bad.yaml:14:5: servers.c.terminate_on_close: terminate_on_close is not used by the sse transport; remove it, or set transport: http",
			"testdata/bad.yaml:18:5: servers.d.sse_read_timeout: sse_read_timeout is not used by the websocket transport; remove it, or set transport: sse",
			"testdata/bad.yaml:20:16: servers.e.transport: unknown transport \"htpp\"; did you mean \"http\"?",
		},
	},
	{
		Name: "urls",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    transport: http
    url: ws://x
  - name: b
    transport: websocket
    url: https://x
  - name: c
    transport: sse
    url: https:///path
  - name: d
    transport: http
    url: ftp://x
  - name: e
    transport: http
    url: "%zz"
`,
		Want: []string{
			"testdata/bad.yaml:4:10: servers.a.url: url must start with http:// or https:// for the http transport; use an https:// (or http://) URL, or set transport: websocket",
			"testdata/bad.yaml:7:10: servers.b.url: url must start with ws:// or wss:// for the websocket transport; use a wss:// (or ws://) URL, or set transport: http",
			"testdata/bad.yaml:10:10: servers.c.url: url has no host; write it as scheme://host/path",
			"testdata/bad.yaml:13:10: servers.d.url: url must start with http:// or https:// for the http transport; use an https:// (or http://) URL",
			"testdata/bad.yaml:16:10: servers.e.url: url is not a valid URL; write it as scheme://host/path",
		},
	},
	{
		Name: "limits",
		File: "testdata/bad.yaml",
		Src: `defaults:
  request_timeout: 500ms
  connect_timeout: 0s
  max_retries: -1
  discovery_ttl: -5s
  health:
    ping_interval: -1s
    ping_timeout: 0
    backoff: [1s, 0s, -2s]
    max_failures: 0
servers:
  - name: a
    command: npx
    request_timeout: 6m
    timeout: 0
    max_retries: -2
    sse_read_timeout: 1s
  - name: b
    transport: sse
    url: https://x
    sse_read_timeout: -1s
`,
		Want: []string{
			"testdata/bad.yaml:2:20: defaults.request_timeout: 500ms is out of range; use a value from 1s to 5m (the default is 30s)",
			"testdata/bad.yaml:3:20: defaults.connect_timeout: must be greater than 0, not 0s",
			"testdata/bad.yaml:4:16: defaults.max_retries: must not be negative, not -1",
			"testdata/bad.yaml:5:18: defaults.discovery_ttl: must not be negative, not -5s",
			"testdata/bad.yaml:7:20: defaults.health.ping_interval: must not be negative, not -1s",
			"testdata/bad.yaml:8:19: defaults.health.ping_timeout: must be greater than 0, not 0s",
			"testdata/bad.yaml:9:19: defaults.health.backoff[1]: must be greater than 0, not 0s",
			"testdata/bad.yaml:9:23: defaults.health.backoff[2]: must be greater than 0, not -2s",
			"testdata/bad.yaml:10:19: defaults.health.max_failures: must be at least 1, not 0; use 1 or more (the default is 3)",
			"testdata/bad.yaml:14:22: servers.a.request_timeout: 6m is out of range; use a value from 1s to 5m",
			"testdata/bad.yaml:15:14: servers.a.timeout: must be greater than 0, not 0s",
			"testdata/bad.yaml:16:18: servers.a.max_retries: must not be negative, not -2",
			"testdata/bad.yaml:17:5: servers.a.sse_read_timeout: sse_read_timeout is not used by the stdio transport; remove it, or set transport: sse",
			"testdata/bad.yaml:21:23: servers.b.sse_read_timeout: must not be negative, not -1s",
		},
	},
	{
		Name: "execution limits",
		File: "testdata/bad.yaml",
		Src: `limits:
  max_concurrent: 0
  queue_wait: 10m
  max_queue: -1
  session_limit: 0
  max_output: 512
  max_concurent: 3
history:
  store: work
  record_values: yes
  keep: 0
  kep: 5
servers:
  - name: a
    command: npx
    max_concurrent: -1
    redact_results: "no"
`,
		Want: []string{
			"testdata/bad.yaml:2:19: limits.max_concurrent: must be at least 1, not 0; use 1 or more (the default is 25)",
			"testdata/bad.yaml:3:15: limits.queue_wait: 10m is out of range; use \"timeout\" to wait as long as the call's timeout allows (the default), or a duration from 0s (fail at once) to 5m",
			"testdata/bad.yaml:4:14: limits.max_queue: must not be negative, not -1",
			"testdata/bad.yaml:5:18: limits.session_limit: must be -1 (unlimited) or at least 1, not 0; use -1 for unlimited",
			"testdata/bad.yaml:6:15: limits.max_output: 512 bytes is out of range; use a size from 1KiB to 1GiB (the default is 1MiB)",
			"testdata/bad.yaml:7:3: limits.max_concurent: unknown field \"max_concurent\"; did you mean \"max_concurrent\"?",
			"testdata/bad.yaml:9:10: history.store: testdata/work is a directory; give the path of the SQLite file, e.g. testdata/work/switchboard.db",
			"testdata/bad.yaml:10:18: history.record_values: must be true or false, not a string; write record_values: true (true and false are written bare: yes, on and quoted words are strings)",
			"testdata/bad.yaml:11:9: history.keep: must be at least 1, not 0; use 1 or more (the default is 10000)",
			"testdata/bad.yaml:12:3: history.kep: unknown field \"kep\"; did you mean \"keep\"?",
			"testdata/bad.yaml:16:21: servers.a.max_concurrent: must not be negative, not -1",
			"testdata/bad.yaml:17:21: servers.a.redact_results: must be true or false, not a string; write redact_results: false (true and false are written bare: yes, on and quoted words are strings)",
		},
	},
	{
		Name: "limit values",
		File: "testdata/bad.yaml",
		Src: `limits:
  max_concurrent: 8
  queue_wait: -1s
  session_limit: -2
  max_output: 2 GiB
history:
  store: postgres://app:hunter2@:5432/calls
servers:
  - name: a
    command: npx
    max_concurrent: 9
  - name: b
    transport: http
    url: https://x
    max_concurrent: 8
`,
		Want: []string{
			"testdata/bad.yaml:3:15: limits.queue_wait: -1s is out of range; use \"timeout\" to wait as long as the call's timeout allows (the default), or a duration from 0s (fail at once) to 5m",
			"testdata/bad.yaml:4:18: limits.session_limit: must be -1 (unlimited) or at least 1, not -2; use -1 for unlimited",
			"testdata/bad.yaml:5:15: limits.max_output: 2 GiB is out of range; use a size from 1KiB to 1GiB (the default is 1MiB)",
			"testdata/bad.yaml:7:10: history.store: the postgres DSN has no host; write it as postgres://user:password@host:5432/dbname",
			"testdata/bad.yaml:11:21: servers.a.max_concurrent: 9 can never be reached: limits.max_concurrent is 8; lower it to 8 or less (0 means only the global limit), or raise limits.max_concurrent",
		},
	},
	{
		Name: "rate",
		File: "testdata/bad.yaml",
		Src: `limits:
  rate:
    per_user: {calls_per_second: -1, burst: 0}
    per_user_server: 5
    per_server: {}
servers:
  - {name: a, command: npx}
`,
		Want: []string{
			"testdata/bad.yaml:3:34: limits.rate.per_user.calls_per_second: must not be negative, not -1; write a number such as 2.5 (0 means no limit)",
			"testdata/bad.yaml:3:45: limits.rate.per_user.burst: must be at least 1, not 0; use 1 or more: the most calls a user may make at once before the rate applies",
			"testdata/bad.yaml:4:22: limits.rate.per_user_server: must be a mapping, not a number",
			"testdata/bad.yaml:5:5: limits.rate.per_server: unknown field \"per_server\"; remove it; docs/configuration.md lists the fields",
		},
	},
	{
		Name: "queue_wait word",
		File: "testdata/bad.yaml",
		Src:  "limits:\n  queue_wait: timout\nservers:\n  - {name: a, command: npx}\n",
		Want: []string{
			"testdata/bad.yaml:2:15: limits.queue_wait: invalid value \"timout\"; use \"timeout\" to wait as long as the call's timeout allows (the default), or a duration from 0s (fail at once) to 5m",
		},
	},
	{
		Name: "limit types",
		File: "testdata/bad.yaml",
		Src: `limits:
  max_concurrent: many
  queue_wait: [1s]
  max_output: 1 TB
  max_queue: 1.5
  session_limit: unlimited
history:
  store: "mysql://root:hunter2@db/calls"
  keep: all
servers:
  - name: a
    command: npx
    max_concurrent: 100
`,
		Want: []string{
			"testdata/bad.yaml:2:19: limits.max_concurrent: must be a whole number, not a string",
			"testdata/bad.yaml:3:15: limits.queue_wait: must be a duration, not a list; use a duration such as 30s or 1m30s, or a number of seconds",
			"testdata/bad.yaml:4:15: limits.max_output: invalid size \"1 TB\"; use a number of bytes, or a size such as 512KiB or 1MiB (units B, KB, KiB, MB, MiB, GB or GiB)",
			"testdata/bad.yaml:5:14: limits.max_queue: must be a whole number, not a number",
			"testdata/bad.yaml:6:18: limits.session_limit: must be a whole number, not a string; use -1 for unlimited",
			"testdata/bad.yaml:8:10: history.store: mysql:// stores are not supported; use a SQLite file path or a postgres:// DSN",
			"testdata/bad.yaml:9:9: history.keep: must be a whole number, not a string",
		},
	},
	{
		Name: "limit blocks",
		File: "testdata/bad.yaml",
		Src: `limit:
  max_concurrent: 5
limits: 5
history: [x]
servers: []
`,
		Want: []string{
			"testdata/bad.yaml:1:1: limit: unknown field \"limit\"; did you mean \"limits\"?",
			"testdata/bad.yaml:3:9: limits: must be a mapping, not a number",
			"testdata/bad.yaml:4:10: history: must be a mapping, not a list",
		},
	},
	{
		Name: "postgres dsn",
		File: "testdata/bad.yaml",
		Src: `history:
  store: "postgresql://app:hunter2@db:port/calls"
`,
		Want: []string{
			"testdata/bad.yaml:2:10: history.store: the postgres DSN is not a valid URL; write it as postgres://user:password@host:5432/dbname",
		},
	},
	{
		Name: "empty backoff",
		File: "testdata/bad.yaml",
		Src: `defaults:
  health: {backoff: []}
`,
		Want: []string{
			"testdata/bad.yaml:2:21: defaults.health.backoff: must list at least one duration; e.g. backoff: [1s, 5s, 15s]",
		},
	},
	{
		Name: "types",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    args: -y pkg
    env: {A: , B: [x]}
    enabled: yes
    max_retries: two
    request_timeout: 30 s
    load_tools: 1
    inherit_env: "true"
    timeout: [1]
`,
		Want: []string{
			"testdata/bad.yaml:4:11: servers.a.args: must be a list of strings, not a string",
			"testdata/bad.yaml:5:13: servers.a.env.A: must be a string, not empty; write A: \"\" for an empty value",
			"testdata/bad.yaml:5:19: servers.a.env.B: must be a string, not a list",
			"testdata/bad.yaml:6:14: servers.a.enabled: must be true or false, not a string; write enabled: true (true and false are written bare: yes, on and quoted words are strings)",
			"testdata/bad.yaml:7:18: servers.a.max_retries: must be a whole number, not a string",
			"testdata/bad.yaml:8:22: servers.a.request_timeout: invalid duration \"30 s\"; use a duration such as 30s or 1m30s, or a number of seconds",
			"testdata/bad.yaml:9:17: servers.a.load_tools: must be true or false, not a number; write load_tools: true (true and false are written bare: yes, on and quoted words are strings)",
			"testdata/bad.yaml:10:18: servers.a.inherit_env: must be true or false, not a string; write inherit_env: true (true and false are written bare: yes, on and quoted words are strings)",
			"testdata/bad.yaml:11:14: servers.a.timeout: must be a duration, not a list; use a duration such as 30s or 1m30s, or a number of seconds",
		},
	},
	{
		Name: "encoding cwd",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    encoding: latin1
    cwd: nope
  - name: b
    command: npx
    cwd: formats/native.yaml
`,
		Want: []string{
			"testdata/bad.yaml:4:15: servers.a.encoding: encoding \"latin1\" is not supported; use utf-8, or remove encoding",
			"testdata/bad.yaml:5:10: servers.a.cwd: directory testdata/nope does not exist; create it, or fix the path (relative paths start at the configuration file's folder)",
			"testdata/bad.yaml:8:10: servers.b.cwd: testdata/formats/native.yaml is not a directory; give the folder the server should run in",
		},
	},
	{
		Name: "vars",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    args: ["${NOPE}", "${1X}", "${input:tok}", "${OPEN"]
    env: {T: "${ALSO_NOPE}", OK: "${NOPE:-fine}"}
`,
		Want: []string{
			"testdata/bad.yaml:4:12: servers.a.args[0]: variable NOPE is not set; set it in the environment, or give a default: ${NOPE:-value}",
			"testdata/bad.yaml:4:23: servers.a.args[1]: invalid variable reference \"${1X}\"; use ${NAME} or ${NAME:-default}, and $$ for a literal $",
			"testdata/bad.yaml:4:32: servers.a.args[2]: ${input:tok} refers to a VS Code input, but this file declares no inputs; set the environment variable SWITCHBOARD_INPUT_TOK and use ${SWITCHBOARD_INPUT_TOK}",
			"testdata/bad.yaml:4:48: servers.a.args[3]: unterminated variable reference \"${OPEN\"; close it with }, or write $$ for a literal $",
			"testdata/bad.yaml:5:14: servers.a.env.T: variable ALSO_NOPE is not set; set it in the environment, or give a default: ${ALSO_NOPE:-value}",
		},
	},
	{
		Name: "env files",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    env_file: envfiles/missing.env
  - name: b
    command: npx
    env_file: envfiles/bad.env
`,
		Want: []string{
			"testdata/bad.yaml:4:15: servers.a.env_file: env file testdata/envfiles/missing.env does not exist; create it, or fix the path (relative paths start at the configuration file's folder)",
			"testdata/envfiles/bad.env:2:1: servers.b.env_file: expected KEY=VALUE; write one NAME=value per line (names are letters, digits and _)",
			"testdata/envfiles/bad.env:3:1: servers.b.env_file: expected KEY=VALUE; write one NAME=value per line (names are letters, digits and _)",
			"testdata/envfiles/bad.env:4:1: servers.b.env_file: variable NOT_SET_ANYWHERE is not set (in MISSING); set it in the environment, or give a default: ${NOT_SET_ANYWHERE:-value}",
			"testdata/envfiles/bad.env:5:1: servers.b.env_file: unterminated double-quoted value of QUOTE; close the value with \"",
		},
	},
	{
		Name: "allowlist",
		File: "testdata/bad.yaml",
		Src: `security:
  allowed_commands: [node, ./bin/x, "npx -y", /opt/x]
servers:
  - name: a
    command: python
  - name: b
    command: ./server
  - name: c
    command: /usr/bin/node
  - name: d
    command: npx -y pkg
  - name: e
    command: /opt/x
  - name: f
    command: /opt/../opt/x
`,
		Want: []string{
			"testdata/bad.yaml:2:28: security.allowed_commands[1]: \"./bin/x\" is a relative path; use a bare command name (found on PATH) or an absolute path",
			"testdata/bad.yaml:2:37: security.allowed_commands[2]: \"npx -y\" must be a command name or path, not a command line; list only the program; arguments go under each server's args",
			"testdata/bad.yaml:5:14: servers.a.command: command \"python\" is not in the allowlist (npx, uvx, docker, node, /opt/x); add it under security.allowed_commands",
			"testdata/bad.yaml:7:14: servers.b.command: command \"./server\" is a relative path; use a bare command name (found on PATH) or an absolute path (and allow that under security.allowed_commands); relative paths are never allowed",
			"testdata/bad.yaml:9:14: servers.c.command: command \"/usr/bin/node\" is not in the allowlist; add it under security.allowed_commands",
			"testdata/bad.yaml:11:14: servers.d.command: command \"npx -y pkg\" contains spaces; set command: npx and put the rest under args",
		},
	},
	{
		Name: "smuggling",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    args: [-y, -c, "rm -rf ~"]
  - name: b
    command: npx
    args: ["--call=sh"]
  - name: c
    command: docker
    args: [run, -i, --rm, --privileged, img]
  - name: d
    command: docker
    args: [run, -v, "/:/host", img]
  - name: e
    command: docker
    args: [run, --mount, "type=bind,source=/,target=/h", img]
  - name: f
    command: docker
    args: [run, --pid=host, img]
  - name: g
    command: docker
    args: [run, --cap-add=ALL, img]
`,
		Want: []string{
			"testdata/bad.yaml:4:16: servers.a.args[1]: npx argument \"-c rm -rf ~\" is refused: it runs a shell command instead of a package; remove it and give the package to run, e.g. args: [-y, @scope/server]; or, if you mean it, add launch: {allow: [npx.call]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:7:12: servers.b.args[0]: npx argument \"--call=sh\" is refused: it runs a shell command instead of a package; remove it and give the package to run, e.g. args: [-y, @scope/server]; or, if you mean it, add launch: {allow: [npx.call]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:10:27: servers.c.args[3]: docker argument \"--privileged\" is refused: it gives the container every device and capability of the host; remove it; or, if you mean it, add launch: {allow: [docker.privileged]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:13:17: servers.d.args[1]: docker argument \"-v /:/host\" is refused: it mounts the host's root filesystem into the container; mount a folder inside the configuration's folder, read-only; or, if you mean it, add launch: {allow: [docker.mount-root]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:16:17: servers.e.args[1]: docker argument \"--mount type=bind,source=/,target=/h\" is refused: it mounts the host's root filesystem into the container; mount a folder inside the configuration's folder, read-only; or, if you mean it, add launch: {allow: [docker.mount-root]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:19:17: servers.f.args[1]: docker argument \"--pid=host\" is refused: the container sees and can signal the host's (or another container's) processes; remove it; or, if you mean it, add launch: {allow: [docker.pid]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
			"testdata/bad.yaml:22:17: servers.g.args[1]: docker argument \"--cap-add=ALL\" is refused: capabilities beyond Docker's defaults let a container escape (SYS_ADMIN, SYS_MODULE, DAC_READ_SEARCH); remove it; or, if you mean it, add launch: {allow: [docker.cap-add]} to the server and trust the file: switchboard config trust <testdata>/bad.yaml --yes",
		},
	},
	{
		Name: "docker",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    command: npx
    args: [x]
    docker: {image: mcp/x}
  - name: b
    docker: {image: -x, container_name: -bad, ports: {"http": 1, "80": 70000}, volume: x}
  - name: c
    transport: http
    url: https://x
    docker: {image: mcp/x}
  - name: d
    docker: mcp/x
`,
		Want: []string{
			"testdata/bad.yaml:3:5: servers.a.command: command cannot be combined with docker; remove command (docker runs the image; put its command under docker.command), or remove docker",
			"testdata/bad.yaml:4:5: servers.a.args: args cannot be combined with docker; remove args (docker runs the image; put its command under docker.command), or remove docker",
			"testdata/bad.yaml:7:21: servers.b.docker.image: \"-x\" is not an image name; name an image such as mcp/github or ghcr.io/org/server:1.0",
			"testdata/bad.yaml:7:41: servers.b.docker.container_name: \"-bad\" is not a valid container name; start with a letter or digit and use only letters, digits, _, . and -",
			"testdata/bad.yaml:7:55: servers.b.docker.ports.http: \"http\" is not a container port; use a port number, optionally with /tcp or /udp, e.g. \"8080\": 8080",
			"testdata/bad.yaml:7:72: servers.b.docker.ports.80: host port 70000 is out of range; use a port from 1 to 65535",
			"testdata/bad.yaml:7:80: servers.b.docker.volume: unknown field \"volume\"; remove it; docs/configuration.md lists the fields",
			"testdata/bad.yaml:11:5: servers.c.docker: docker is not used by the http transport; remove it, or set transport: stdio",
			"testdata/bad.yaml:13:13: servers.d.docker: must be a mapping, not a string",
		},
	},
	{
		Name: "headers",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    transport: http
    url: https://x
    headers: {"Bad Name": x, X-Ok: "a\nb"}
`,
		Want: []string{
			"testdata/bad.yaml:5:15: servers.a.headers.Bad Name: invalid header name \"Bad Name\"; use letters, digits and -",
			"testdata/bad.yaml:5:36: servers.a.headers.X-Ok: header value contains a line break; remove it",
		},
	},
	{
		Name: "yaml extras",
		File: "testdata/bad.yaml",
		Src: `x: &a {command: npx}
servers:
  - name: a
    <<: *nope
  - name: b
    command: !shell npx
`,
		Want: []string{
			"testdata/bad.yaml:4:9: alias *nope refers to no anchor defined before it; define &nope first",
			"testdata/bad.yaml:6:14: unsupported YAML tag !shell; remove the tag",
		},
	},
	{
		Name: "utf8",
		File: "testdata/bad.yaml",
		Src:  "servers:\n  - name: a\xff\n",
		Want: []string{
			"testdata/bad.yaml:2:12: the file is not valid UTF-8; save it as UTF-8",
		},
	},
	{
		Name: "claude",
		File: "testdata/claude.json",
		Src: `{"mcpServers": {"a": {"comand": "npx"}, "b": {"command": "python", "args": ["s.py"]}, "c": {"command": "npx", "disabled": "yes"}, "d": {"type": "grpc", "url": "https://x"}, "e": {"command": "npx", "url": "https://x"}, "bad name": {"command": "npx"}}}
`,
		Want: []string{
			"testdata/claude.json:1:17: mcpServers.a.command: command is required by the stdio transport; did you mean command instead of \"comand\"?",
			"testdata/claude.json:1:58: mcpServers.b.command: command \"python\" is not allowed: this file is not trusted, and an untrusted file may run only npx, uvx, docker; if you wrote or reviewed it, run: switchboard config trust <testdata>/claude.json --yes",
			"testdata/claude.json:1:123: mcpServers.c.disabled: must be true or false, not a string; write disabled: true (true and false are written bare: yes, on and quoted words are strings)",
			"testdata/claude.json:1:145: mcpServers.d.type: unknown transport \"grpc\"; use one of stdio, sse, http, websocket",
		},
	},
	{
		Name: "vscode",
		File: "testdata/.vscode/mcp.json",
		Src: `{
  "servers": {
    "a": {"type": "stdio", "command": "npx", "env_file": ".env", "env": {"T": "${input:token}"}},
    "b": {"type": "stdio"}
  }
}
`,
		Want: []string{
			"testdata/.vscode/mcp.json:3:79: servers.a.env.T: input \"token\" has no value; store it: switchboard config input token <testdata>/.vscode/mcp.json (it asks without echo; --stdin reads it from a pipe), or set SWITCHBOARD_INPUT_TOKEN",
			"testdata/.vscode/mcp.json:4:5: servers.b.command: command is required by the stdio transport; add the command that starts the server, e.g. command: npx",
		},
	},
	{
		Name: "tools",
		File: "testdata/agent.yaml",
		Src: `tools:
  - type: mcp
    command: npx
  - name: b
    type: mcp
    command: npx
    env_file: .env
    request_timeout: 600
  - name: c
    type: mcp
    transport: sse
`,
		Want: []string{
			"testdata/agent.yaml:2:5: tools[0].name: name is required; add name: with a unique name, e.g. name: github",
			"testdata/agent.yaml:7:5: tools.b.env_file: unknown field \"env_file\"; did you mean \"envFile\"?",
			"testdata/agent.yaml:8:22: tools.b.request_timeout: 10m is out of range; use a value from 1s to 5m",
			"testdata/agent.yaml:9:5: tools.c.url: url is required by the sse transport; add url: https://example.com/mcp",
		},
	},
	{
		Name: "empty secret, scopes of two words",
		File: "testdata/bad.yaml",
		Src: `servers:
  - name: a
    transport: http
    url: https://a.example.com/mcp
    secrets: [API_KEY, " "]
    oauth: {scopes: [read, "read write", ""]}
`,
		Want: []string{
			"testdata/bad.yaml:5:24: servers.a.secrets[1]: is empty; remove it",
			`testdata/bad.yaml:6:28: servers.a.oauth.scopes[1]: scope "read write" is not one word; write each scope as its own list item, without spaces or quotes`,
			`testdata/bad.yaml:6:42: servers.a.oauth.scopes[2]: scope "" is not one word; write each scope as its own list item, without spaces or quotes`,
		},
	},
}
