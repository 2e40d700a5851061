// ts-oauth-client.mjs signs in to an OAuth-protected MCP server with the
// TypeScript SDK's client (its OAuthClientProvider and auth flow), the way an
// MCP host does, and calls one tool. It is run by tokenauth's tests:
//
//   SDK_DIR=<.../@modelcontextprotocol/sdk/dist/esm> node ts-oauth-client.mjs URL TOOL
//
// The "browser" follows the authorization endpoint's redirect without
// visiting the redirect URI, as a person's browser would after "Allow", and
// hands the code back. It prints one JSON line: {"ok": true, "text": ...,
// "authorizeUrl": ...} or {"ok": false, "error": ...}, and exits 0 either way
// (1 only for broken usage).

const [url, tool] = process.argv.slice(2);
if (!url || !tool || !process.env.SDK_DIR) {
    process.stderr.write('usage: SDK_DIR=<sdk/dist/esm> node ts-oauth-client.mjs URL TOOL\n');
    process.exit(1);
}
const sdk = path => import(new URL(`file://${process.env.SDK_DIR}/${path}`).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { UnauthorizedError } = await sdk('client/auth.js');

const redirectUrl = 'http://127.0.0.1:1/callback';

/** An in-memory OAuthClientProvider whose browser approves at once. */
class Provider {
    constructor() {
        this.code = undefined;
        this.authorizeUrl = undefined;
    }
    get redirectUrl() {
        return redirectUrl;
    }
    get clientMetadata() {
        return {
            client_name: 'tokenauth ts client',
            redirect_uris: [redirectUrl],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
        };
    }
    clientInformation() {
        return this.client;
    }
    saveClientInformation(info) {
        this.client = info;
    }
    tokens() {
        return this.savedTokens;
    }
    saveTokens(tokens) {
        this.savedTokens = tokens;
    }
    saveCodeVerifier(v) {
        this.verifier = v;
    }
    codeVerifier() {
        return this.verifier;
    }
    async redirectToAuthorization(authorizationUrl) {
        this.authorizeUrl = authorizationUrl.href;
        const res = await fetch(authorizationUrl, { redirect: 'manual' });
        const location = res.headers.get('location');
        if (!location) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
        this.code = new URL(location).searchParams.get('code');
    }
}

async function connect(provider) {
    const client = new Client({ name: 'tokenauth-ts-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await client.connect(transport);
    return { client, transport };
}

try {
    const provider = new Provider();
    let conn;
    try {
        conn = await connect(provider);
    } catch (err) {
        if (!(err instanceof UnauthorizedError) || !provider.code) throw err;
        // The first connect ran discovery, registration and the
        // authorization request; finish with the code, then connect again.
        const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
        await transport.finishAuth(provider.code);
        conn = await connect(provider);
    }
    const result = await conn.client.callTool({ name: tool, arguments: {} });
    const text = (result.content ?? []).map(c => c.text ?? '').join('');
    await conn.client.close();
    process.stdout.write(JSON.stringify({ ok: !result.isError, text, authorizeUrl: provider.authorizeUrl }) + '\n');
} catch (err) {
    process.stdout.write(JSON.stringify({ ok: false, error: String(err?.stack ?? err) }) + '\n');
}
