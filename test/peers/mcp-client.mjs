// mcp-client.mjs drives the TypeScript SDK's MCP client (@modelcontextprotocol/sdk,
// installed next to this file by `make peers`) for Switchboard's Go tests, so that
// the gateway is checked against a real client that is not written in Go. The Go
// side is internal/testpeer.RunTSClient; read its documentation for the protocol.
//
// Usage: node test/peers/mcp-client.mjs < input.json
//
// Input: one JSON object on stdin:
//
//   {"target": {"transport": "http" | "sse", "url": "...", "headers": {...}}
//            | {"transport": "stdio", "command": "...", "args": [...], "env": {...}},
//    "sampling": {"text": "..."},                          (optional)
//    "elicitation": {"action": "accept", "content": {...}}, (optional)
//    "roots": [{"uri": "file:///tmp", "name": "tmp"}],      (optional)
//    "wire": true,                                         (optional, "http" only)
//    "steps": [{"op": "...", ...}, ...]}
//
// With "wire", every JSON-RPC message the server sends is also recorded with the HTTP
// stream it came on: each step's line gets "wire", one {method, id, messages} per
// request the step POSTed (the messages of that POST's response stream, in order, the
// response included), and the summary gets "standalone", the messages of the GET
// streams.
//
// Output: one JSON line per result on stdout: first {"op":"connect",...}, then one
// line per step, in order, then {"op":"summary",...}. Every line has "op" and "ok",
// and "error": {"code","message","name","data"} when ok is false. A step that fails
// does not stop the others. The exit status is 0 unless the input is broken or the
// connection cannot be made; the reason is then on stderr.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const clientInfo = { name: 'switchboard-ts-client', version: '1.0.0' };
const samplingModel = 'ts-client-model';
const pollMs = 50; // between tools/list calls while waiting for tools to appear
const closeMs = 5000; // longest wait for the transport to close before exiting
const maxErrors = 50; // client errors kept for the summary

/** Fails the run: prints the reason on stderr and exits 1 (2 for broken input). */
function die(status, message) {
    process.stderr.write(`mcp-client: ${message}\n`);
    process.exit(status);
}

/** Writes one result line to stdout. */
function emit(line) {
    return new Promise(resolve => process.stdout.write(JSON.stringify(line) + '\n', () => resolve()));
}

/** Turns whatever was thrown into the {code, message, name, data} of a result line. */
function errorOf(err) {
    if (err instanceof Error || (err && typeof err === 'object')) {
        const out = {
            code: typeof err.code === 'number' ? err.code : 0,
            message: String(err.message ?? err),
            name: String(err.name ?? 'Error'),
        };
        if (err.data !== undefined) out.data = err.data;
        return out;
    }
    return { code: 0, message: String(err), name: 'Error' };
}

const delay = ms => new Promise(resolve => setTimeout(resolve, ms));

async function readInput() {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    let input;
    try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
        die(2, `reading the input from stdin: ${err.message}`);
    }
    if (!input || typeof input !== 'object' || !input.target || typeof input.target !== 'object') {
        die(2, 'the input must be a JSON object with a "target" object');
    }
    if (input.steps != null && !Array.isArray(input.steps)) {
        die(2, '"steps" must be an array');
    }
    for (const [i, step] of (input.steps ?? []).entries()) {
        if (!step || typeof step !== 'object' || !(step.op in ops)) {
            die(2, `step ${i}: unknown op ${JSON.stringify(step?.op)}, want one of ${Object.keys(ops).join(', ')}`);
        }
    }
    return input;
}

// Wire records (input.wire): the messages of each HTTP stream, by the stream they came on.
const wire = {
    standalone: [], // the GET streams' messages
    gets: 0, // the GET streams opened
    step: null, // the current step's [{method, id, messages}], or null between steps
    reading: null, // the current step's promises, settled when a POST stream is read to its end
};
const wireWaitMs = 10000; // longest wait, at a step's end, for its POST streams to end

/** Reads the JSON-RPC messages of an HTTP response body into out, as they arrive. */
async function readMessages(body, contentType, out) {
    if (/^application\/json/i.test(contentType ?? '')) {
        const data = JSON.parse(await new Response(body).text());
        out.push(...(Array.isArray(data) ? data : [data]));
        return;
    }
    // text/event-stream: events end with a blank line; their data lines join with \n.
    const decoder = new TextDecoder();
    let buffered = '';
    const take = () => {
        for (let end; (end = buffered.search(/\r?\n\r?\n/)) >= 0; ) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end).replace(/^\r?\n\r?\n/, '');
            const data = event
                .split(/\r?\n/)
                .filter(line => line.startsWith('data:'))
                .map(line => line.slice(5).replace(/^ /, ''))
                .join('\n');
            if (data.trim() !== '') out.push(JSON.parse(data)); // a priming event has no data
        }
    };
    for await (const chunk of body) {
        buffered += decoder.decode(chunk, { stream: true });
        take();
    }
}

/** Wraps fetch so that the body of every stream the client reads is also recorded. */
function wireFetch(base) {
    return async (url, init) => {
        const method = String(init?.method ?? 'GET').toUpperCase();
        // A POST belongs to the step that sent it, whenever its stream answers:
        // the step waits until its POSTs' streams are read to their end.
        const stepWire = wire.step;
        let done = () => {};
        if (method === 'POST') wire.reading?.push(new Promise(resolve => (done = resolve)));
        let res;
        try {
            res = await base(url, init);
        } catch (err) {
            done();
            throw err;
        }
        let out;
        if (!res.ok || !res.body || res.status === 202) {
            done();
            return res;
        }
        if (method === 'GET') {
            wire.gets++;
            out = wire.standalone;
        } else {
            let msg;
            try {
                msg = JSON.parse(init.body);
            } catch {
                msg = undefined;
            }
            if (method !== 'POST' || !msg || Array.isArray(msg) || msg.id === undefined || typeof msg.method !== 'string') {
                done();
                return res;
            }
            const entry = { method: msg.method, id: msg.id, messages: [] };
            stepWire?.push(entry);
            out = entry.messages;
        }
        const [mine, theirs] = res.body.tee();
        readMessages(mine, res.headers.get('content-type'), out)
            .catch(err => out.push({ wire_error: String(err?.message ?? err) }))
            .finally(done);
        return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
}

function makeTransport(target, recordWire) {
    const requestInit = target.headers ? { headers: target.headers } : undefined;
    switch (target.transport) {
        case 'http':
            if (recordWire) {
                return new StreamableHTTPClientTransport(new URL(target.url), { requestInit, fetch: wireFetch(fetch) });
            }
            return new StreamableHTTPClientTransport(new URL(target.url), { requestInit });
        case 'sse':
            return new SSEClientTransport(new URL(target.url), { requestInit });
        case 'stdio':
            if (!target.command) die(2, 'a stdio target needs a "command"');
            return new StdioClientTransport({
                command: target.command,
                args: target.args ?? [],
                env: { ...getDefaultEnvironment(), ...(target.env ?? {}) },
                stderr: 'inherit',
            });
        default:
            die(2, `unknown transport ${JSON.stringify(target.transport)}, want "http", "sse" or "stdio"`);
    }
}

// Session-wide records, printed in the summary line.
const notifications = new Map(); // method → {count, params (the last), waiters}
const samplingRequests = [];
const elicitationRequests = [];
const rootsRequests = [];
const clientErrors = [];
let currentRoots = []; // what the client answers roots/list with (input.roots, then set_roots)

const maxKept = 1000; // notifications' params kept per method, for wait_notification's match

function noteNotification(method, params) {
    let n = notifications.get(method);
    if (!n) {
        n = { count: 0, params: undefined, all: [], waiters: new Set() };
        notifications.set(method, n);
    }
    n.count++;
    n.params = params;
    if (n.all.length < maxKept) n.all.push(params);
    for (const wake of n.waiters) wake();
}

/**
 * Waits until at least count notifications with method have arrived since the start
 * (with match, only those whose params, as JSON, contain it); returns {count, params},
 * params of the last one counted.
 */
async function waitNotification(method, count, timeoutMs, match) {
    let n = notifications.get(method);
    if (!n) {
        n = { count: 0, params: undefined, all: [], waiters: new Set() };
        notifications.set(method, n);
    }
    const seen = () => {
        if (match === undefined) return { count: n.count, params: n.params };
        const hits = n.all.filter(p => JSON.stringify(p ?? {}).includes(match));
        return { count: hits.length, params: hits.at(-1) };
    };
    if (seen().count >= count) return seen();
    return new Promise((resolve, reject) => {
        const wake = () => {
            const s = seen();
            if (s.count < count) return;
            clearTimeout(timer);
            n.waiters.delete(wake);
            resolve(s);
        };
        const timer = setTimeout(() => {
            n.waiters.delete(wake);
            const what = match === undefined ? method : `${method} matching ${JSON.stringify(match)}`;
            reject(new Error(`timed out after ${timeoutMs} ms waiting for ${count} ${what} (got ${seen().count})`));
        }, timeoutMs);
        n.waiters.add(wake);
    });
}

function requestOptions(step) {
    return step.timeout_ms ? { timeout: step.timeout_ms } : {};
}

/**
 * Calls list (a paginated client method) until nextCursor runs out and joins the pages;
 * with step.pages, also "pages": each page's [{count, nextCursor}].
 */
async function listAll(list, key, step) {
    const items = [];
    const pages = [];
    let cursor;
    do {
        const page = await list(cursor ? { cursor } : undefined, requestOptions(step));
        items.push(...(page[key] ?? []));
        cursor = page.nextCursor;
        pages.push({ count: (page[key] ?? []).length, nextCursor: cursor ?? null });
    } while (cursor);
    return step.pages ? { [key]: items, pages } : { [key]: items };
}

function lister(method, key) {
    return (client, step) => listAll((params, opts) => client[method](params, opts), key, step);
}

// Steps: each returns the fields of its result line (op and ok are added).
const ops = {
    // list_tools {want: [names], timeout_ms}: with want, polls until every name is listed.
    list_tools: async (client, step) => {
        const want = step.want ?? [];
        const deadline = Date.now() + (step.timeout_ms ?? 30000);
        for (;;) {
            const res = await listAll((p, o) => client.listTools(p, o), 'tools', { pages: step.pages });
            const missing = want.filter(name => !res.tools.some(tool => tool.name === name));
            if (missing.length === 0) return res;
            if (Date.now() >= deadline) {
                throw new Error(`tools never listed within ${step.timeout_ms ?? 30000} ms: ${missing.join(', ')}`);
            }
            await delay(pollMs);
        }
    },
    list_prompts: lister('listPrompts', 'prompts'),
    list_resources: lister('listResources', 'resources'),
    list_resource_templates: lister('listResourceTemplates', 'resourceTemplates'),

    call: async (client, step) => {
        const progress = [];
        const opts = requestOptions(step);
        if (step.progress) opts.onprogress = p => progress.push(p);
        const res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
        return step.progress ? { ...res, progress } : res;
    },

    // call_task {name, arguments, ttl}: runs the call as a task with the SDK's
    // experimental callToolStream (tools/call with params.task, tasks/get until the
    // task ends or needs input, then tasks/result): the types of its messages in
    // order, the task id, the last status seen and the result.
    call_task: async (client, step) => {
        const out = { types: [] };
        const params = { name: step.name, arguments: step.arguments ?? {} };
        const opts = { ...requestOptions(step), task: { ttl: step.ttl ?? 60000 } };
        for await (const msg of client.experimental.tasks.callToolStream(params, undefined, opts)) {
            out.types.push(msg.type);
            if (msg.type === 'taskCreated') out.taskId = msg.task.taskId;
            if (msg.type === 'taskStatus') out.status = msg.task.status;
            if (msg.type === 'result') out.result = msg.result;
            if (msg.type === 'error') throw msg.error;
        }
        return out;
    },
    // list_tasks, get_task {task_id}: the result.
    list_tasks: (client, step) => client.experimental.tasks.listTasks(undefined, requestOptions(step)),
    get_task: (client, step) => client.experimental.tasks.getTask(step.task_id, requestOptions(step)),

    // call_cancel {name, arguments, after_progress: N | after_ms: M}: aborts the call
    // after the Nth progress notification or after M ms.
    call_cancel: async (client, step) => {
        const progress = [];
        const controller = new AbortController();
        let timer;
        const opts = {
            ...requestOptions(step),
            signal: controller.signal,
            onprogress: p => {
                progress.push(p);
                if (step.after_progress && progress.length >= step.after_progress) controller.abort();
            },
        };
        if (step.after_ms !== undefined) timer = setTimeout(() => controller.abort(), step.after_ms);
        let res;
        try {
            res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
        } catch (err) {
            if (!controller.signal.aborted) throw err;
            // The SDK's own error for an aborted request, kept with ok: true.
            return { cancelled: true, error: errorOf(err), progress };
        } finally {
            clearTimeout(timer);
        }
        const err = new Error('the call finished before it was cancelled');
        err.data = { result: res, progress };
        throw err;
    },

    get_prompt: (client, step) => client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }, requestOptions(step)),
    read_resource: (client, step) => client.readResource({ uri: step.uri }, requestOptions(step)),
    complete: (client, step) => {
        const params = { ref: step.ref, argument: step.argument };
        if (step.context) params.context = step.context;
        return client.complete(params, requestOptions(step));
    },
    set_level: (client, step) => client.setLoggingLevel(step.level, requestOptions(step)),
    ping: (client, step) => client.ping(requestOptions(step)),
    subscribe: (client, step) => client.subscribeResource({ uri: step.uri }, requestOptions(step)),
    unsubscribe: (client, step) => client.unsubscribeResource({ uri: step.uri }, requestOptions(step)),

    // wait_notification {method, count (default 1), match, timeout_ms (default 10000)}.
    wait_notification: async (client, step) => {
        const n = await waitNotification(step.method, step.count ?? 1, step.timeout_ms ?? 10000, step.match);
        return { method: step.method, count: n.count, params: n.params };
    },
    sleep: async (client, step) => {
        await delay(step.ms ?? 0);
        return {};
    },
    // set_roots {roots}: the client's roots change; it says so (notifications/roots/list_changed).
    set_roots: async (client, step) => {
        currentRoots = step.roots ?? [];
        await client.sendRootsListChanged();
        return {};
    },
    // terminate_session: ends a streamable HTTP session with DELETE.
    terminate_session: async (client, step, transport) => {
        if (typeof transport.terminateSession !== 'function') {
            throw new Error('terminate_session needs the "http" transport');
        }
        await transport.terminateSession();
        return {};
    },
};

async function main() {
    const input = await readInput();
    const capabilities = {};
    if (input.sampling) capabilities.sampling = {};
    if (input.elicitation) capabilities.elicitation = {};
    if (input.roots) capabilities.roots = { listChanged: true };

    const client = new Client(clientInfo, { capabilities });
    client.onerror = err => {
        if (clientErrors.length < maxErrors) clientErrors.push(String(err?.message ?? err));
    };
    if (input.sampling) {
        client.setRequestHandler(CreateMessageRequestSchema, request => {
            samplingRequests.push(request.params);
            return {
                role: 'assistant',
                content: { type: 'text', text: String(input.sampling.text ?? '') },
                model: samplingModel,
                stopReason: 'endTurn',
            };
        });
    }
    if (input.elicitation) {
        client.setRequestHandler(ElicitRequestSchema, request => {
            elicitationRequests.push(request.params);
            const res = { action: input.elicitation.action ?? 'accept' };
            if (res.action === 'accept') res.content = input.elicitation.content ?? {};
            return res;
        });
    }
    if (input.roots) {
        currentRoots = input.roots;
        client.setRequestHandler(ListRootsRequestSchema, request => {
            rootsRequests.push(request.params ?? {});
            return { roots: currentRoots };
        });
    }

    if (input.wire && input.target.transport !== 'http') die(2, '"wire" needs the "http" transport');
    const transport = makeTransport(input.target, input.wire);
    // The Client chains to a handler set before connect, so this sees every
    // message from the server, the ones the Client handles itself included.
    transport.onmessage = message => {
        if (message && typeof message.method === 'string' && message.id === undefined) {
            noteNotification(message.method, message.params);
        }
    };
    try {
        await client.connect(transport);
    } catch (err) {
        die(1, `connecting over ${input.target.transport} to ${input.target.url ?? input.target.command}: ${err?.stack ?? err}`);
    }
    await emit({
        op: 'connect',
        ok: true,
        serverInfo: client.getServerVersion(),
        capabilities: client.getServerCapabilities(),
        instructions: client.getInstructions(),
        protocolVersion: transport.protocolVersion,
    });

    for (const step of input.steps ?? []) {
        let line;
        if (input.wire) {
            wire.step = [];
            wire.reading = [];
        }
        try {
            const res = await ops[step.op](client, step, transport);
            line = { op: step.op, ok: true, ...res };
        } catch (err) {
            line = { op: step.op, ok: false, error: errorOf(err) };
        }
        if (input.wire) {
            // The SDK has the response before the stream ends: wait for the end.
            // A cancelled call's stream may stay open: such a step sets wire_wait_ms.
            const all = Promise.all(wire.reading);
            await Promise.race([all, delay(step.wire_wait_ms ?? wireWaitMs)]);
            line.wire = wire.step;
            wire.step = wire.reading = null;
        }
        await emit(line);
    }

    await emit({
        op: 'summary',
        ok: true,
        notifications: Object.fromEntries([...notifications].filter(([, n]) => n.count > 0).map(([m, n]) => [m, n.count])),
        sampling_requests: samplingRequests,
        elicitation_requests: elicitationRequests,
        // Each form's fields in the order the client got them: a reader that
        // decodes a JSON object into a map loses it.
        elicitation_field_orders: elicitationRequests.map(p => Object.keys(p?.requestedSchema?.properties ?? {})),
        roots_requests: rootsRequests.length,
        errors: clientErrors,
        ...(input.wire ? { standalone: wire.standalone, standalone_streams: wire.gets } : {}),
    });
    await Promise.race([client.close().catch(() => {}), delay(closeMs)]);
    process.exit(0);
}

main().catch(err => die(1, err?.stack ?? String(err)));
