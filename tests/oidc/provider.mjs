#!/usr/bin/env node
// A real OpenID Provider for vmcp's tests: panva/oidc-provider, configured with
// test users, test clients, JWT + opaque access tokens, introspection,
// client_credentials, RFC 8693 token exchange, and a browser-less "password"
// grant for obtaining user tokens. Everything is in memory and on loopback.
//
//   node tests/oidc/provider.mjs --port 0 [--host 127.0.0.1] [--slow-ms N]
//                                [--exit-with-stdin] [--verbose]
//
// Once listening it prints exactly one line to stdout:
//   listening http://127.0.0.1:PORT
// and the issuer is that URL. Everything else (oidc-provider's notices,
// errors, --verbose logs) goes to stderr. SIGTERM / SIGINT stop it cleanly.
//
// See README.md beside this file for the grants, clients, users and the
// /test/* endpoints.

import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { parseArgs } from 'node:util';

// ---------------------------------------------------------------------------
// stdout belongs to the "listening" line alone. oidc-provider prints some
// notices with console.info (i.e. to stdout); send all console output to
// stderr *before* the library is loaded (hence the dynamic imports below).
// ---------------------------------------------------------------------------
for (const method of ['log', 'info', 'debug']) {
  console[method] = (...args) => console.error(...args);
}

const { default: Provider, errors } = await import('oidc-provider');
const jose = await import('jose');

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------
let argv;
try {
  ({ values: argv } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'slow-ms': { type: 'string', default: '0' },
      'exit-with-stdin': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
    strict: true,
  }));
} catch (err) {
  console.error(`${err.message}\nusage: node provider.mjs [--port N] [--host 127.0.0.1] [--slow-ms N] [--exit-with-stdin] [--verbose]`);
  process.exit(2);
}

const PORT = Number.parseInt(argv.port, 10);
const HOST = argv.host;
if (!Number.isInteger(PORT) || PORT < 0 || PORT > 65535) {
  console.error(`invalid --port ${argv.port}`);
  process.exit(2);
}
if (!/^(127\.\d+\.\d+\.\d+|::1)$/.test(HOST)) {
  console.error(`--host must be a loopback address (127.x.y.z or ::1), got ${HOST}`);
  process.exit(2);
}

// Runtime knobs, also adjustable via POST /test/control.
const control = {
  slowMs: Number.parseInt(argv['slow-ms'], 10) || 0, // delay every response
  fail: false, // answer every provider request with 503
};

const log = (...args) => {
  if (argv.verbose) console.error('[oidc]', ...args);
};

// ---------------------------------------------------------------------------
// Well-known names shared with the Rust tests
// ---------------------------------------------------------------------------
const GRANT_PASSWORD = 'urn:vmcp:test:password';
const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TT_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const TT_JWT = 'urn:ietf:params:oauth:token-type:jwt';

const RS_MCP = 'https://vmcp.test/mcp'; // the gateway itself, JWT tokens
const RS_OPAQUE = 'https://opaque.vmcp.test'; // the gateway, opaque tokens (introspected)
const RS_BACKEND = 'https://backend.vmcp.test'; // a backend behind the gateway, JWT tokens
const RS_BACKEND2 = 'https://backend2.vmcp.test'; // a second backend, JWT tokens

// ---------------------------------------------------------------------------
// Signing keys: generated at every start, one per algorithm, distinct kids.
// The first key (RS256) is the default for every JWT the provider signs.
// ---------------------------------------------------------------------------
function signingKey(alg, type, options) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: `test-${alg.toLowerCase()}`,
    alg,
    use: 'sig',
  };
}

const SIGNING_KEYS = [
  signingKey('RS256', 'rsa', { modulusLength: 2048 }),
  signingKey('ES256', 'ec', { namedCurve: 'P-256' }),
  signingKey('EdDSA', 'ed25519'),
];
const SIGNING_ALGS = SIGNING_KEYS.map((k) => k.alg);

// Public half, used to verify JWT subject tokens presented for token exchange.
const LOCAL_JWKS = jose.createLocalJWKSet({
  keys: SIGNING_KEYS.map(({ d, p, q, dp, dq, qi, ...pub }) => pub),
});

// ---------------------------------------------------------------------------
// Test users. The keys are the `sub`; `username` in the password grant is
// the same string.
// ---------------------------------------------------------------------------
const ACCOUNTS = {
  alice: {
    email: 'alice@vmcp.test',
    email_verified: true,
    name: 'Alice Example',
    groups: ['engineering', 'admins'],
    roles: ['developer'],
  },
  bob: {
    email: 'bob@vmcp.test',
    email_verified: true,
    name: 'Bob Example',
    groups: ['sales'],
    roles: ['viewer'],
  },
  carol: {
    email: 'carol@vmcp.test',
    email_verified: false,
    name: 'Carol Example',
  },
};

// Claims copied from the account into every access token issued for it.
const USER_TOKEN_CLAIMS = ['email', 'name', 'groups', 'roles'];

async function findAccount(ctx, sub) {
  const account = ACCOUNTS[sub];
  if (!account) return undefined;
  return {
    accountId: sub,
    async claims() {
      return { sub, ...account };
    },
  };
}

// ---------------------------------------------------------------------------
// Resource servers (RFC 8707 resource indicators) and which client may ask
// for which. A token's `aud` is the resource identifier.
// ---------------------------------------------------------------------------
const RESOURCE_SERVERS = {
  [RS_MCP]: {
    scope: 'mcp:read mcp:write mcp:admin',
    accessTokenFormat: 'jwt',
    accessTokenTTL: 600,
  },
  [RS_OPAQUE]: {
    scope: 'mcp:read mcp:write mcp:admin',
    accessTokenFormat: 'opaque',
    accessTokenTTL: 600,
  },
  [RS_BACKEND]: {
    scope: 'backend:read backend:write',
    accessTokenFormat: 'jwt',
    accessTokenTTL: 300,
  },
  [RS_BACKEND2]: {
    scope: 'backend:read backend:write',
    accessTokenFormat: 'jwt',
    accessTokenTTL: 300,
  },
};

// Allowed resources per client; the first one is the client's default when a
// request names no resource.
const CLIENT_RESOURCES = {
  'mcp-client': [RS_MCP, RS_OPAQUE],
  'vmcp-gateway': [RS_BACKEND, RS_BACKEND2, RS_MCP, RS_OPAQUE],
  'backend-service': [RS_BACKEND, RS_BACKEND2],
};

// Returns the resource server definition, or throws invalid_target.
function resourceServerInfo(identifier, client) {
  const info = RESOURCE_SERVERS[identifier];
  if (!info || !CLIENT_RESOURCES[client.clientId]?.includes(identifier)) {
    throw new errors.InvalidTarget(`resource ${identifier} is unknown or not allowed for this client`);
  }
  return info;
}

// Turns a `scope` parameter into the scopes granted for a resource server:
// absent => all of the resource server's scopes; OIDC scopes (openid,
// profile, email) are accepted and dropped, as oidc-provider does for
// resource-bound tokens; anything else unknown => invalid_scope.
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);
function resolveScope(requested, info) {
  const available = info.scope.split(' ');
  if (!requested) return available.join(' ');
  const granted = [];
  for (const scope of requested.split(' ').filter(Boolean)) {
    if (available.includes(scope)) granted.push(scope);
    else if (!OIDC_SCOPES.has(scope)) {
      throw new errors.InvalidScope(`scope ${scope} is not available for this resource`, scope);
    }
  }
  return granted.join(' ');
}

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------
const CLIENTS = [
  {
    // Public test client standing in for an MCP client: obtains user tokens
    // with the password grant (or a real authorization code flow + PKCE).
    client_id: 'mcp-client',
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    grant_types: ['authorization_code', 'refresh_token', GRANT_PASSWORD],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/callback'],
  },
  {
    // The gateway: introspects opaque tokens, exchanges user tokens for
    // backend tokens, and gets its own tokens with client_credentials.
    client_id: 'vmcp-gateway',
    client_secret: 'gateway-secret',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials', GRANT_TOKEN_EXCHANGE],
    response_types: [],
    redirect_uris: [],
  },
  {
    // A machine client (service account).
    client_id: 'backend-service',
    client_secret: 'backend-secret',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  },
];

// Only these clients get real answers from the introspection endpoint; for
// any other authenticated client every token is {"active": false}.
const INTROSPECTORS = new Set(['vmcp-gateway']);

// ---------------------------------------------------------------------------
// Extra claims put in access tokens (top-level JWT claims, or stored and
// returned by introspection for opaque tokens):
//   - user tokens carry the account's email/name/groups/roles;
//   - token-exchange tokens carry the RFC 8693 `act` claim.
// ---------------------------------------------------------------------------
const ACT = Symbol('act');

async function extraTokenClaims(ctx, token) {
  const extra = {};
  const account = token.accountId && ACCOUNTS[token.accountId];
  if (account) {
    for (const claim of USER_TOKEN_CLAIMS) {
      if (account[claim] !== undefined) extra[claim] = account[claim];
    }
  }
  if (token[ACT]) extra.act = token[ACT];
  return Object.keys(extra).length ? extra : undefined;
}

// ---------------------------------------------------------------------------
// Provider configuration
// ---------------------------------------------------------------------------
const configuration = {
  clients: CLIENTS,
  jwks: { keys: SIGNING_KEYS },
  findAccount,
  extraTokenClaims,

  // Token lifetimes: the resource server's accessTokenTTL (see
  // RESOURCE_SERVERS), unless a grant sets expiresIn itself (ttl parameter,
  // token exchange).
  ttl: {
    AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
    ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
  },

  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
    groups: ['groups'],
    roles: ['roles'],
  },
  scopes: ['openid', 'profile', 'email', 'offline_access', 'groups', 'roles'],

  features: {
    // Login/consent pages served by oidc-provider itself (any username);
    // only there so that a real authorization code flow also works.
    devInteractions: { enabled: true },

    introspection: {
      enabled: true,
      async allowedPolicy(ctx, client) {
        return INTROSPECTORS.has(client.clientId);
      },
    },

    revocation: { enabled: true },

    clientCredentials: { enabled: true },

    resourceIndicators: {
      enabled: true,
      // No resource parameter => the client's first allowed resource.
      async defaultResource(ctx, client) {
        return CLIENT_RESOURCES[client.clientId]?.[0];
      },
      async getResourceServerInfo(ctx, identifier, client) {
        return resourceServerInfo(identifier, client);
      },
      async useGrantedResource() {
        return true;
      },
    },
  },

  // Errors are always JSON, even for a browser (the default HTML page also
  // logs a notice on every call).
  async renderError(ctx, out) {
    ctx.type = 'json';
    ctx.body = out;
  },
};

// ---------------------------------------------------------------------------
// Server: bind first (port 0 => ephemeral), then build the provider with
// the now-known issuer.
// ---------------------------------------------------------------------------
const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(PORT, HOST, resolve);
});
const { port } = server.address();
const ISSUER = `http://${HOST.includes(':') ? `[${HOST}]` : HOST}:${port}`;

const provider = new Provider(ISSUER, configuration);
provider.keys = [crypto.randomBytes(32).toString('hex')]; // Koa cookie signing

// ---------------------------------------------------------------------------
// Test counters: GET /test/stats, POST /test/stats/reset
// ---------------------------------------------------------------------------
function freshStats() {
  return {
    discovery: 0, // GET /.well-known/openid-configuration (and the oauth alias)
    jwks: 0, // GET /jwks
    introspection: 0, // POST /token/introspection (any outcome)
    introspection_active: 0, // ... of which answered active: true
    token_exchange: 0, // token requests with the token-exchange grant (any outcome)
    token_exchange_failed: 0, // ... of which answered an error
    client_credentials: 0, // client_credentials grants (any outcome)
    password: 0, // urn:vmcp:test:password grants (any outcome)
    token: 0, // all POST /token requests
    requests: 0, // every request except /test/*
  };
}
let stats = freshStats();

// ---------------------------------------------------------------------------
// Koa middleware, outermost first.
// ---------------------------------------------------------------------------

// 1. /test/* endpoints (never slowed down, never failed, never counted).
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/test/')) return next();
  if (ctx.method === 'GET' && ctx.path === '/test/stats') {
    ctx.body = stats;
  } else if (ctx.method === 'POST' && ctx.path === '/test/stats/reset') {
    ctx.body = stats;
    stats = freshStats();
  } else if (ctx.method === 'POST' && ctx.path === '/test/control') {
    // e.g. POST /test/control?slow_ms=500&fail=1 ; returns the new settings
    if (ctx.query.slow_ms !== undefined) control.slowMs = Number.parseInt(ctx.query.slow_ms, 10) || 0;
    if (ctx.query.fail !== undefined) control.fail = ['1', 'true'].includes(ctx.query.fail);
    ctx.body = { slow_ms: control.slowMs, fail: control.fail };
  } else {
    ctx.status = 404;
    ctx.body = { error: 'not_found' };
  }
  return undefined;
});

// 2. Optional latency and failure injection (--slow-ms, /test/control).
provider.use(async (ctx, next) => {
  if (control.slowMs > 0) await new Promise((r) => setTimeout(r, control.slowMs));
  if (control.fail) {
    ctx.status = 503;
    ctx.body = { error: 'temporarily_unavailable', error_description: 'failure injected by /test/control' };
    return;
  }
  await next();
});

// 3. RFC 8414 metadata alias: same document as OIDC discovery.
provider.use(async (ctx, next) => {
  if (ctx.path === '/.well-known/oauth-authorization-server') {
    ctx.path = '/.well-known/openid-configuration';
  }
  await next();
});

// 4. Counting (after the route ran, from its name, grant type and status).
provider.use(async (ctx, next) => {
  stats.requests += 1;
  await next();
  const route = ctx.oidc?.route;
  const ok = ctx.status >= 200 && ctx.status < 300;
  log(ctx.method, ctx.path, route ?? '-', ctx.status);
  switch (route) {
    case 'discovery': stats.discovery += 1; break;
    case 'jwks': stats.jwks += 1; break;
    case 'introspection':
      stats.introspection += 1;
      if (ok && ctx.body?.active === true) stats.introspection_active += 1;
      break;
    case 'token': {
      stats.token += 1;
      const grantType = ctx.oidc.params?.grant_type;
      if (grantType === GRANT_TOKEN_EXCHANGE) {
        stats.token_exchange += 1;
        if (!ok) stats.token_exchange_failed += 1;
      } else if (grantType === 'client_credentials') {
        stats.client_credentials += 1;
      } else if (grantType === GRANT_PASSWORD) {
        stats.password += 1;
      }
      break;
    }
    default:
  }
});

// ---------------------------------------------------------------------------
// Helpers shared by the custom grants
// ---------------------------------------------------------------------------

// errors.InvalidGrant always says "grant request is invalid"; tests are
// easier to debug with the actual reason in error_description.
const invalidGrant = (description) => new errors.CustomOIDCProviderError('invalid_grant', description);

// Builds a ResourceServer for `identifier`, optionally signing with `alg`.
function buildResourceServer(identifier, client, alg) {
  const info = resourceServerInfo(identifier, client);
  if (alg === undefined) return { info, rs: new provider.ResourceServer(identifier, info) };
  if (!SIGNING_ALGS.includes(alg)) {
    throw new errors.InvalidRequest(`alg must be one of ${SIGNING_ALGS.join(', ')}`);
  }
  if (info.accessTokenFormat !== 'jwt') {
    throw new errors.InvalidRequest('alg only applies to resources with JWT access tokens');
  }
  return { info, rs: new provider.ResourceServer(identifier, { ...info, jwt: { sign: { alg } } }) };
}

function positiveInt(value, name) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new errors.InvalidRequest(`${name} must be a positive integer`);
  return n;
}

// A single target (resource or audience) value, or invalid_target.
function singleTarget(...values) {
  const targets = new Set(values.flat().filter((v) => v !== undefined && v !== ''));
  if (targets.size !== 1) {
    throw new errors.InvalidTarget('exactly one resource/audience value is required');
  }
  return [...targets][0];
}

// ---------------------------------------------------------------------------
// Custom grant: urn:vmcp:test:password (mcp-client only)
//   username   alice | bob | carol           (required; no password: test only)
//   resource   default https://vmcp.test/mcp (JWT) | https://opaque.vmcp.test
//   scope      default: all of the resource's scopes
//   ttl        token lifetime in seconds (default: the resource's TTL)
//   alg        RS256 (default) | ES256 | EdDSA  (JWT resources only)
// Issues a Grant + AccessToken through oidc-provider's own models, exactly as
// the authorization code grant would.
// ---------------------------------------------------------------------------
provider.registerGrantType(GRANT_PASSWORD, async (ctx) => {
  const { client, params } = ctx.oidc;
  const accountId = params.username;
  if (!accountId) throw new errors.InvalidRequest('missing required parameter \'username\'');
  const account = await findAccount(ctx, accountId);
  if (!account) throw invalidGrant('unknown username');

  const resource = singleTarget(params.resource ?? CLIENT_RESOURCES[client.clientId][0]);
  const { info, rs } = buildResourceServer(resource, client, params.alg);
  const scope = resolveScope(params.scope, info);
  const ttl = positiveInt(params.ttl, 'ttl');

  const grant = new provider.Grant({ accountId, clientId: client.clientId });
  if (scope) grant.addResourceScope(resource, scope);
  const grantId = await grant.save();

  const token = new provider.AccessToken({
    accountId,
    client,
    grantId,
    gty: GRANT_PASSWORD,
    scope: scope || undefined,
    resourceServer: rs,
    ...(ttl ? { expiresIn: ttl } : undefined),
  });
  ctx.oidc.entity('Grant', grant);
  ctx.oidc.entity('AccessToken', token);
  const accessToken = await token.save();

  ctx.body = {
    access_token: accessToken,
    token_type: token.tokenType,
    expires_in: token.expiration,
    scope: token.scope,
  };
}, ['username', 'resource', 'scope', 'ttl', 'alg'], ['resource']);

// ---------------------------------------------------------------------------
// RFC 8693 token exchange (vmcp-gateway only, enforced by its grant_types)
//   subject_token        an access token issued by this provider, still valid
//                        (JWT: signature/iss/exp checked; opaque: looked up)
//   subject_token_type   urn:ietf:params:oauth:token-type:access_token | ...:jwt
//   requested_token_type optional, ...:access_token (default) | ...:jwt
//   resource / audience  the one target, e.g. https://backend.vmcp.test
//   scope                default: all of the target's scopes
// The new token keeps the subject's `sub` (and user claims), gets
// act: {sub: "vmcp-gateway"} (nested if the subject already had an `act`),
// and never outlives the subject token.
// ---------------------------------------------------------------------------
const SUBJECT_TOKEN_TYPES = new Set([TT_ACCESS_TOKEN, TT_JWT]);

// Returns { sub, exp, act } for a valid subject token, or throws invalid_grant.
async function validateSubjectToken(value) {
  let isJwt = false;
  try {
    isJwt = !!jose.decodeProtectedHeader(value);
  } catch {}

  if (isJwt) {
    try {
      const { payload } = await jose.jwtVerify(value, LOCAL_JWKS, {
        issuer: ISSUER,
        typ: 'at+jwt',
        algorithms: SIGNING_ALGS,
        requiredClaims: ['sub', 'exp'],
      });
      return { sub: payload.sub, exp: payload.exp, act: payload.act };
    } catch (err) {
      throw invalidGrant(`subject_token: ${err.message}`);
    }
  }

  const token = await provider.AccessToken.find(value)
    ?? await provider.ClientCredentials.find(value);
  if (!token?.isValid) throw invalidGrant('subject_token is invalid or expired');
  if (token.grantId) {
    const grant = await provider.Grant.find(token.grantId);
    if (!grant) throw invalidGrant('subject_token grant is gone');
  }
  return { sub: token.accountId ?? token.clientId, exp: token.exp, act: token.extra?.act };
}

provider.registerGrantType(GRANT_TOKEN_EXCHANGE, async (ctx) => {
  const { client, params } = ctx.oidc;

  if (!params.subject_token) throw new errors.InvalidRequest('missing required parameter \'subject_token\'');
  if (!params.subject_token_type) throw new errors.InvalidRequest('missing required parameter \'subject_token_type\'');
  if (!SUBJECT_TOKEN_TYPES.has(params.subject_token_type)) {
    throw new errors.InvalidRequest('unsupported subject_token_type');
  }
  if (params.actor_token !== undefined) {
    throw new errors.InvalidRequest('actor_token is not supported by this provider');
  }
  const requestedType = params.requested_token_type ?? TT_ACCESS_TOKEN;
  if (!SUBJECT_TOKEN_TYPES.has(requestedType)) {
    throw new errors.InvalidRequest('unsupported requested_token_type');
  }

  const resource = singleTarget(params.resource, params.audience);
  const { info, rs } = buildResourceServer(resource, client);
  if (requestedType === TT_JWT && info.accessTokenFormat !== 'jwt') {
    throw new errors.InvalidTarget('this resource does not accept JWT access tokens');
  }
  const scope = resolveScope(params.scope, info);

  const subject = await validateSubjectToken(params.subject_token);

  const now = Math.floor(Date.now() / 1000);
  const expiresIn = Math.max(1, Math.min(info.accessTokenTTL, subject.exp - now));

  const token = new provider.AccessToken({
    accountId: subject.sub,
    client,
    gty: GRANT_TOKEN_EXCHANGE,
    scope: scope || undefined,
    resourceServer: rs,
    expiresIn,
  });
  token[ACT] = { sub: client.clientId, ...(subject.act ? { act: subject.act } : undefined) };
  ctx.oidc.entity('AccessToken', token);
  const accessToken = await token.save();

  ctx.body = {
    access_token: accessToken,
    issued_token_type: requestedType,
    token_type: 'Bearer',
    expires_in: token.expiration,
    scope: token.scope,
  };
}, [
  'subject_token', 'subject_token_type', 'requested_token_type',
  'audience', 'resource', 'scope', 'actor_token', 'actor_token_type',
], ['audience', 'resource']);

// ---------------------------------------------------------------------------
// Logging of failures (stderr only)
// ---------------------------------------------------------------------------
provider.on('server_error', (ctx, err) => console.error('[oidc] server_error', ctx.path, err));
provider.on('grant.error', (ctx, err) => log('grant.error', err.error, err.error_detail ?? err.error_description ?? ''));
provider.on('introspection.error', (ctx, err) => log('introspection.error', err.error, err.error_detail ?? ''));

// ---------------------------------------------------------------------------
// Go: serve, announce, and stop cleanly.
// ---------------------------------------------------------------------------
// Fail fast on a client misconfiguration instead of at the first request
// (only now: the clients refer to the custom grant types registered above).
for (const { client_id: clientId } of CLIENTS) {
  if (!(await provider.Client.find(clientId))) {
    throw new Error(`client ${clientId} failed to load`);
  }
}
server.on('request', provider.callback());
process.stdout.write(`listening ${ISSUER}\n`);

let stopping = false;
function stop(reason) {
  if (stopping) return;
  stopping = true;
  log('stopping:', reason);
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
if (argv['exit-with-stdin']) {
  // The parent (a test harness) holds our stdin; when it dies, we go too.
  process.stdin.on('end', () => stop('stdin closed'));
  process.stdin.on('error', () => stop('stdin error'));
  process.stdin.resume();
}
