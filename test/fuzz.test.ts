// Property-based fuzzing of every route the app has (read from the app itself, so a new route
// is fuzzed or this test fails), over REST, MCP, OAuth and the console: bad bodies, query
// strings, path values and headers get a 4xx in the documented shape (a JSON-RPC error or an
// isError result on /mcp, OAuth's error body on /oauth, a redirect or an error page in the
// console), never a 5xx, and change nothing in the database (every table hashed before and
// after each batch, test/fuzz/state.ts).
//
// Two kinds of cases: every single-field mutation of a known-valid call (each field of each
// operation set to each value its schema refuses, to text PostgreSQL cannot hold, to what names
// another workspace's records, and to edge numbers such as 1e300 or 5e17 whether or not the
// schema allows them; an unknown field added, a required one removed: test/fuzz/mutations.ts),
// and fast-check's random ones. FUZZ_RUNS sets the random cases per target (default 6); from
// FUZZ_RUNS=100 every mutation also goes over every surface (by default each goes over one of
// REST and MCP, alternately) with more bad values of each kind. FUZZ_SEED replays a run.
// A 429 (rate limits) is a refusal like any other 4xx.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import net from 'node:net'
import FindMyWay, { type HTTPMethod, type HTTPVersion } from 'find-my-way'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { addMember, addProject, bearer, buildTestApp, PUBLIC_URL, seedWorkspace } from './helpers/app.ts'
import { Agent, csrfOf } from './console/helpers.ts'
import { hiddenFields, REDIRECT } from './oauth/helpers.ts'
import { createKey, revokeKey } from '../bin/admin.ts'
import { coercingAjv, strictAjv } from '../core/validation.ts'
import { generateKey, generateSecret, hashKey, linkTokenPrefixes } from '../db/keys.ts'
import { pkceS256 } from '../routes/oauth.ts'
import { surfaceKinds } from '../plugins/auth.ts'
import { badValues, jsonText, mutations, pathText, queryText, REMOVE, setAt, urlEncode, arbitraryMutation, deeplyNested, type BadValue, type Mutation, type Schema } from './fuzz/mutations.ts'
import { appRoutes, recordReachedRoutes, routeKey } from './fuzz/routes.ts'
import { allOperations, callArgs, World } from './helpers/examples.ts'
import { changedTables, snapshot } from './fuzz/state.ts'

const RUNS = Number(process.env.FUZZ_RUNS ?? 6)
/** Long runs: every mutation over every surface, and more bad values of each kind. */
const EVERY_SURFACE = RUNS >= 100
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
const MCP_HOST = '127.0.0.1:3000'
// ~45 s on a quiet 2-core machine, past tap's 120 s (.taprc) when other suites share it.
t.setTimeout(600_000)

/**
 * Routes this test does not fuzz, each with the reason. Everything else the app serves must be
 * reached by some fuzzed request, or the last subtest fails naming it.
 */
const NOT_FUZZED: Record<string, string> = {}

type Family = 'api' | 'mcp' | 'oauth' | 'console' | 'public'
interface Expect {
  family: Family
  /** The request is bad: a success is a failure. Otherwise any answer short of a 5xx will do. */
  reject: boolean
  /** The field made bad, which a 400's details must name (when they name fields at all). */
  field?: string
  /** /oauth/authorize may redirect to the client's registered redirect URI; the console only to itself. */
  redirectTo?: string
}

interface ErrorBody { error: { code: string; message: string; details?: { path: string; message: string }[] } }

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** What is wrong with a DESIGN §4 error body, or null. */
function errorShapeProblem(body: unknown): string | null {
  const e = (body as Partial<ErrorBody> | undefined)?.error
  if (!e || typeof e !== 'object') return 'not the error shape'
  if (typeof e.code !== 'string' || !/^[a-z][a-z_]*$/.test(e.code)) return 'error.code is not a snake_case string'
  if (typeof e.message !== 'string' || e.message === '') return 'error.message is not a sentence'
  if (e.details !== undefined && (!Array.isArray(e.details) || !e.details.every((d) => typeof d?.path === 'string' && typeof d?.message === 'string'))) return 'error.details is not [{path, message}]'
  if (Object.keys(body as object).length !== 1) return 'the error body has more than `error`'
  return null
}

/** A 400's details, when there are any, name the field made bad (or something inside it). */
function namesField(body: ErrorBody, field: string | undefined): boolean {
  const details = body.error.details
  if (field === undefined || !details?.length) return true
  return details.some((d) => d.path === field || d.path.startsWith(`${field}.`) || d.path.startsWith(`${field}[`))
}

const local = (location: string) => location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\')

/** What is wrong with an answer to a fuzzed request, or null. */
function judge(res: LightMyRequestResponse, method: string, e: Expect): string | null {
  const status = res.statusCode
  const shown = () => `${status} ${res.body.slice(0, 300)}`
  if (status >= 500) return `a ${shown()}`
  if (res.headers['x-content-type-options'] !== 'nosniff') return `no X-Content-Type-Options: nosniff (${status})`
  if (status >= 300 && status < 400) {
    const location = String(res.headers.location ?? '')
    if (e.family !== 'console' && e.family !== 'public') return `a redirect from an API: ${status} → ${location}`
    if (!local(location) && !(e.redirectTo && location.startsWith(e.redirectTo))) return `a redirect away from the site: ${location}`
    return null
  }
  if (method === 'HEAD') return e.reject && status < 300 ? `accepted: ${status}` : null
  const body = parse(res.body)
  switch (e.family) {
    case 'api':
    case 'public': {
      if (status < 400) return e.reject ? `accepted: ${shown()}` : null
      if (e.family === 'public' && body === undefined) return null // a static file's own 404
      const problem = errorShapeProblem(body)
      if (problem) return `${problem}: ${shown()}`
      const err = (body as ErrorBody).error
      if (status === 429 && err.code !== 'rate_limited') return `429 with code ${err.code}`
      if (status === 401 && !res.headers['www-authenticate']) return '401 without WWW-Authenticate'
      if (status === 405 && !res.headers.allow) return '405 without Allow'
      if (status === 400 && !namesField(body as ErrorBody, e.field)) return `the error does not name ${e.field}: ${shown()}`
      return null
    }
    case 'mcp': {
      if (status === 202 && res.body === '') return e.reject ? 'accepted as a notification (202)' : null
      if (status >= 400 && body && typeof body === 'object' && !('jsonrpc' in body) && !Array.isArray(body)) {
        const problem = errorShapeProblem(body)
        return problem ? `${problem}: ${shown()}` : null
      }
      const messages = Array.isArray(body) ? body : [body]
      if (messages.length === 0) return `an empty JSON-RPC batch answer: ${shown()}`
      for (const m of messages as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; result?: { isError?: boolean; content?: { text?: string }[] } }[]) {
        if (m?.jsonrpc !== '2.0') return `not a JSON-RPC answer: ${shown()}`
        if (m.error) {
          if (typeof m.error.code !== 'number' || typeof m.error.message !== 'string') return `a malformed JSON-RPC error: ${shown()}`
          continue
        }
        if (!m.result) return `neither result nor error: ${shown()}`
        if (status >= 400) return `a result with HTTP ${shown()}`
        if (m.result.isError) {
          const inner = parse(m.result.content?.[0]?.text ?? '')
          const problem = errorShapeProblem(inner)
          if (problem) return `isError content: ${problem}: ${shown()}`
          if ((inner as ErrorBody).error.code === 'invalid_arguments' && !namesField(inner as ErrorBody, e.field)) return `the error does not name ${e.field}: ${shown()}`
          continue
        }
        if (e.reject) return `accepted: ${shown()}`
      }
      return null
    }
    case 'oauth': {
      if (status < 400) return e.reject ? `accepted: ${shown()}` : null
      const b = body as { error?: unknown; error_description?: unknown } | undefined
      if (typeof b?.error !== 'string' || (b.error_description !== undefined && typeof b.error_description !== 'string')) return `not an OAuth error body: ${shown()}`
      return null
    }
    case 'console': {
      if (status < 400) return e.reject ? `accepted: ${shown()}` : null
      // A page, the asset route's plain 404, or (for a URL that does not parse) the app's error shape.
      const type = String(res.headers['content-type'] ?? '')
      if (type.startsWith('text/html') || type.startsWith('text/plain')) return null
      const problem = errorShapeProblem(body)
      return problem ? `a console error that is neither a page nor the error shape: ${type} ${shown()}` : null
    }
  }
}

t.test('fuzzing every route', async (t) => {
  const app = await buildTestApp(t)
  const reached = recordReachedRoutes(app)
  const routes = appRoutes(app)
  // Another workspace, which no request here may reach, and a second project in ours.
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const P = ws.project.id
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second-project' })

  let ipCounter = 0
  // A fresh client address for every request: per-address limits (sign-in, OAuth) are not what is fuzzed.
  const nextIp = () => {
    ipCounter++
    return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`
  }
  let sent = 0
  let slowedDown = 0
  const send = async (opts: InjectOptions) => {
    sent++
    const res = await app.inject({ remoteAddress: nextIp(), ...opts })
    if (res.statusCode === 429) slowedDown++
    return res
  }
  const json = (key: string, extra: Record<string, string> = {}) => ({ ...bearer(key), 'content-type': 'application/json', ...extra })
  const must = async (opts: InjectOptions, status: number) => {
    const res = await send(opts)
    if (res.statusCode !== status) throw new Error(`setup: ${opts.method} ${opts.url} → ${res.statusCode} ${res.body.slice(0, 300)}`)
    return res
  }

  // Data to point at: an opportunity, a memory and events in both workspaces (the operations'
  // valid calls name records of their own, made below).
  const submit = (key: string, project: string) =>
    must({ method: 'POST', url: `/api/v1/mcp/projects/${project}/opportunities`, headers: json(key), payload: { contribution_type: 'potential_user_opportunity', key_information: 'Pricing question', reason: 'r', suggested_action: 's' } }, 201)
  const opp = (await submit(ws.keys.mcp, P)).json().event_id as string
  const otherOpp = (await submit(other.keys.mcp, other.project.id)).json().event_id as string
  const commented = await app.repos.comments.add({ projectId: ws.project.id, eventId: opp, body: 'A comment to point at', authorUserId: ws.user.id, now: new Date() })
  const comment = commented.kind === 'added' ? commented.comment.comment_id : 'cmt_missing'
  const remember = (key: string, project: string) =>
    must({ method: 'POST', url: `/v1/projects/${project}/memories`, headers: json(key), payload: { content: 'Annual pricing converts better', tags: ['pricing'] } }, 201)
  const memory = (await remember(ws.keys.service, P)).json().id as string
  const otherMemory = (await remember(other.keys.service, other.project.id)).json().id as string
  const now = Date.now()
  await must({
    method: 'POST',
    url: '/v1/events',
    headers: json(ws.keys.ingest),
    payload: { events: [0, 1, 2].map((i) => ({ event: 'daily_use', distinct_id: ws.user.email, timestamp: new Date(now - i * 60_000).toISOString() })) },
  }, 200)

  // A webhook (and a message of it) in each workspace, made directly: no URL is resolved here.
  const hookOf = (w: typeof ws) => app.repos.webhooks.create({ workspaceId: w.workspace.id, projectId: w.project.id, url: 'https://example.com/hook', events: ['memory.added'], description: '', secret: 'whsec_c2VjcmV0', createdBy: w.user.id, now: new Date() })
  const hook = (await hookOf(ws)).id
  const otherHook = (await hookOf(other)).id
  const message = (await app.repos.webhooks.enqueueOne(hook, 'webhook.test', {}, new Date())).id

  // Credentials that must not do what a valid one does.
  const readOnlyService = (await createKey(app, { email: ws.user.email, kind: 'service', readOnly: true })).key
  const readOnlyMcp = (await createKey(app, { email: ws.user.email, kind: 'mcp', readOnly: true })).key
  const narrowedService = (await createKey(app, { email: ws.user.email, kind: 'service', project: second.id })).key
  const narrowedMcp = (await createKey(app, { email: ws.user.email, kind: 'mcp', project: second.id })).key
  const viewer = await addMember(app, P, 'viewer')
  const revoked = await createKey(app, { email: ws.user.email, kind: 'service' })
  await revokeKey(app, revoked.id)
  const spareKey = await createKey(app, { email: ws.user.email, kind: 'service', name: 'spare' })
  const otherKeyId = (await createKey(app, { email: other.user.email, kind: 'service' })).id
  // An invitation still open: its link's page and form, and the id the Members page cancels it by.
  const inviteToken = generateSecret(linkTokenPrefixes.invitation)
  const invited = await app.repos.members.invite({ workspaceId: ws.workspace.id, email: 'fuzz-invited@example.com', invitedBy: ws.user.id, projects: [{ projectId: P, role: 'viewer' }], tokenHash: hashKey(inviteToken), now: new Date(), expiresAt: new Date(Date.now() + 86_400_000) })
  if (!invited.ok) throw new Error('setup: no invitation')
  const invitationId = invited.invitation.id

  // The console, signed in as the owner, with a form token.
  const agent = new Agent(app, '10.255.0.1')
  await agent.signIn(ws.user.email, ws.user.password)
  const csrf = csrfOf((await agent.get('/console/keys')).body)
  const cookie = () => [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ')

  // OAuth: a confidential client with a grant (a spent code, a live refresh token, an unspent
  // code), and a second, public client.
  const register = async (body: object) => (await must({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/json' }, payload: body }, 201)).json() as { client_id: string; client_secret?: string }
  const client = await register({ client_name: 'Fuzz client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' })
  const publicClient = await register({ client_name: 'Public client', redirect_uris: [REDIRECT] })
  const anotherClient = await register({ client_name: 'Another client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' })
  const otherCreds = { client_id: anotherClient.client_id, client_secret: anotherClient.client_secret! }
  const verifier = 'v'.repeat(43)
  const authorizeQuery = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: pkceS256(verifier), code_challenge_method: 'S256', resource: `${PUBLIC_URL}/mcp`, state: 'st' }
  const consentFields = async () => {
    const page = await agent.get(`/oauth/authorize?${new URLSearchParams(authorizeQuery)}`)
    if (page.statusCode !== 200) throw new Error(`setup: consent page ${page.statusCode}`)
    return hiddenFields(page.body)
  }
  const newCode = async () => {
    const res = await agent.post('/oauth/authorize', { ...(await consentFields()), decision: 'allow' })
    return new URL(String(res.headers.location)).searchParams.get('code')!
  }
  const creds = { client_id: client.client_id, client_secret: client.client_secret! }
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const tokens = (await must({ method: 'POST', url: '/oauth/token', headers: form, payload: new URLSearchParams({ grant_type: 'authorization_code', code: await newCode(), code_verifier: verifier, redirect_uri: REDIRECT, ...creds }).toString() }, 200)).json() as { access_token: string; refresh_token: string }
  const unspentCode = await newCode()
  const grantId = /\/console\/connections\/(grt_[0-9A-Za-z]+)\/revoke/.exec((await agent.get('/console/connections')).body)?.[1] ?? 'grt_missing'
  const otherGrant = 'grt_doesnotexist000'

  // One known-valid call per operation: the richest of its own examples (the most values, the
  // most to make bad), the records it names made in our workspace (test/helpers/examples.ts);
  // and one per documented route that is no operation.
  const operations = allOperations(app)
  const world = new World(app, ws)
  const leaves = (value: unknown): number =>
    Array.isArray(value) ? value.reduce((n: number, v) => n + leaves(v), 0) : value && typeof value === 'object' ? Object.values(value).reduce((n: number, v) => n + leaves(v), 0) : 1
  const valid: Record<string, Record<string, unknown>> = { list_tools: {}, get_tool: { name: app.registry.names()[0]! } }
  for (const op of operations) {
    const richest = op.examples.valid.reduce((a, b) => (leaves(b.args) > leaves(a.args) ? b : a))
    valid[op.name] = callArgs(op, await world.realize(op, richest.args), P)
  }
  const notATool = operations.find((op) => op.tool === false)?.name ?? 'no_such_operation'

  /**
   * Values the schema allows that name nothing this caller may reach: by field, and by what the
   * valid call's value is — an id of some kind (another workspace's record of that kind, or none),
   * the name of a tool (no such tool, an operation that is not one).
   */
  const semantic = (op: string): Record<string, BadValue[]> => {
    const v = (value: unknown, label: string): BadValue => ({ value, label, badness: 'semantic' })
    const kinds: Record<string, [string | undefined, string]> = { opp: [otherOpp, 'opportunity'], mem: [otherMemory, 'memory'], whk: [otherHook, 'webhook'], msg: [undefined, 'message'], key: [otherKeyId, 'key'] }
    const byValue: Record<string, BadValue[]> = {}
    for (const [field, value] of Object.entries(valid[op] ?? {})) {
      const first = Array.isArray(value) ? value[0] : value
      const kind = typeof first === 'string' ? /^(opp|mem|whk|msg|key)_/.exec(first)?.[1] : undefined
      if (kind) {
        const [theirs, noun] = kinds[kind]!
        byValue[field] = Array.isArray(value)
          ? [...(theirs ? [v([first, theirs], `another workspace's ${noun} among ours`)] : []), v([`${kind}_doesnotexist000`], `no such ${noun}`)]
          : [...(theirs ? [v(theirs, `another workspace's ${noun}`)] : []), v(`${kind}_doesnotexist000`, `no such ${noun}`)]
      } else if (typeof value === 'string' && field === 'name' && app.registry.names().includes(value)) {
        byValue[field] = [v('no_such_tool', 'no such tool'), v(notATool, 'an operation that is not a tool')]
      }
    }
    return {
      project: [v(other.project.id, "another workspace's project"), v('no-such-project', 'no such project')],
      timezone: [v('Mars/Olympus_Mons', 'no such time zone')],
      timestamp: [v('2999-01-01T00:00:00Z', 'far in the future'), v('0000-01-01T00:00:00Z', 'year 0')],
      before: [v('not-a-cursor', 'not a cursor')],
      slug: [v(second.slug, "another project's")],
      ...byValue,
    }
  }

  const doc = (await must({ method: 'GET', url: '/openapi.json' }, 200)).json() as { paths: Record<string, Record<string, DocOperation>> }
  interface DocOperation {
    operationId: string
    security?: unknown[]
    parameters?: { in: string; name: string; schema: Schema; required?: boolean }[]
    requestBody?: { content: Record<string, { schema: Schema }> }
  }

  const operationOf = (name: string) => {
    try {
      return app.registry.operation(name)
    } catch {
      return undefined
    }
  }
  const writes = (name: string) => operationOf(name)?.annotations.readOnlyHint === false

  /** The snapshot of every table before and after a batch of bad requests, which must be the same. */
  async function batch(t: Test, label: string, fn: () => Promise<string[]>) {
    const before = await snapshot(app)
    const [count, started] = [sent, performance.now()]
    const problems = await fn()
    t.comment(`${sent - count} requests in ${Math.round(performance.now() - started)} ms: ${label.slice(0, 80)}`)
    const after = await snapshot(app)
    t.same(problems.slice(0, 20), [], `${label}: ${problems.length === 0 ? 'every answer as expected' : `${problems.length} wrong answers (the first 20 shown)`}`)
    t.same(changedTables(before, after), [], `${label}: no table changed`)
  }

  /** Runs a fast-check property; a counterexample is a problem, shrunk and with its seed. */
  async function property<T>(arb: fc.Arbitrary<T>, runs: number, check: (value: T) => Promise<string | null>): Promise<string[]> {
    if (runs <= 0) return []
    const details = await fc.check(fc.asyncProperty(arb, async (value) => {
      const problem = await check(value)
      if (problem) throw new Error(problem)
    }), { numRuns: runs, seed: SEED, endOnFailure: false, maxSkipsPerRun: 10 })
    return details.failed ? [`${(details.errorInstance as Error | undefined)?.message ?? 'failed'} — ${fc.defaultReportMessage(details)?.split('\n').slice(0, 3).join(' ') ?? ''}`] : []
  }

  await t.test('the valid calls are valid', async (t) => {
    for (const { name } of operations) {
      const check = strictAjv.compile(app.registry.contract(name)!.input_schema)
      t.ok(check(structuredClone(valid[name])), `${name}: ${JSON.stringify(check.errors ?? [])}`)
    }
    // Read-only ones are called for real: they answer 200.
    for (const name of app.registry.names().filter((n) => !writes(n))) {
      const res = await send({ method: 'POST', url: `/v1/tools/${name}`, headers: json(ws.keys.service), payload: jsonText(valid[name]) })
      t.equal(res.statusCode, 200, `${name}: ${res.body.slice(0, 200)}`)
    }
  })

  // ---------------------------------------------------------------------------------------
  // Requests built from a valid call, for every documented API route and for MCP tools/call.

  interface Target {
    label: string
    family: Family
    op?: string
    /** An inject request from headers to add (or override) and the parts to replace. */
    request: (parts?: { path?: Record<string, string>; query?: Record<string, string[]>; body?: string; headers?: Record<string, string | undefined> }) => InjectOptions
    pathParams: Record<string, Schema>
    queryParams: Record<string, Schema>
    bodySchema?: Schema
    body?: unknown
    key?: string
    /** Key kinds the surface takes, for credentials of the wrong kind. */
    kinds: string[]
  }

  const keyFor = (url: string) => (url.startsWith('/api/v1/mcp') ? ws.keys.mcp : url === '/v1/events' ? ws.keys.ingest : ws.keys.service)
  const fieldOf = (param: string) => (param === 'project_id' || param === 'project' ? 'project' : param)
  const fill = (url: string, values: Record<string, string>) => url.replace(/:(\w+)|\*/g, (m, name: string | undefined) => urlEncode(values[name ?? '*'] ?? m))
  const withQuery = (url: string, query: Record<string, string[]>) => {
    const q = new URLSearchParams()
    for (const [k, vs] of Object.entries(query)) for (const v of vs) q.append(k, v)
    const text = q.toString()
    return text ? `${url}?${text}` : url
  }

  const apiTargets: Target[] = []
  for (const [docPath, ops] of Object.entries(doc.paths)) {
    for (const [lower, op] of Object.entries(ops)) {
      if (!op.security?.length || docPath === '/mcp') continue
      const method = lower.toUpperCase()
      const url = docPath.replace(/\{(\w+)\}/g, ':$1')
      const name = op.operationId.replace(/^call_/, '')
      const base = valid[name]
      if (!base) {
        t.fail(`${method} ${url}: no valid call for ${name}: neither an operation with examples nor a route in \`valid\``)
        continue
      }
      const params = op.parameters ?? []
      const pathParams = Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, p.schema]))
      const queryParams = Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema]))
      const bodySchema = op.requestBody?.content['application/json']?.schema
      const fromPath = new Set(Object.keys(pathParams).map(fieldOf))
      const pathValues = Object.fromEntries(Object.keys(pathParams).map((p) => [p, String(base[fieldOf(p)])]))
      const queryValues = Object.fromEntries(Object.keys(queryParams).filter((q) => base[q] !== undefined).map((q) => [q, queryText(base[q])!]))
      const body = bodySchema ? Object.fromEntries(Object.entries(base).filter(([k]) => !fromPath.has(k) || op.operationId.startsWith('call_'))) : undefined
      const key = keyFor(url)
      apiTargets.push({
        label: `${method} ${url}`,
        family: 'api',
        op: name,
        pathParams,
        queryParams,
        bodySchema,
        body,
        key,
        kinds: surfaceKinds[url.startsWith('/api/v1/mcp') ? 'project-api' : url === '/v1/events' ? 'ingest' : 'tools-api'],
        request: (parts = {}) => ({
          method: method as InjectOptions['method'],
          url: withQuery(fill(url, { ...pathValues, ...parts.path }), parts.query ?? queryValues),
          headers: dropUndefined({ ...(body !== undefined ? json(key) : bearer(key)), ...parts.headers }),
          ...(body !== undefined || parts.body !== undefined ? { payload: parts.body ?? jsonText(body) } : {}),
        }),
      })
    }
  }

  const mcpHeaders = (era: '2025' | '2026', name: string, key = ws.keys.service) => ({
    ...json(key),
    host: MCP_HOST,
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': era === '2026' ? '2026-07-28' : '2025-11-25',
    ...(era === '2026' ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {}),
  })
  const META_2026 = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
  const toolCall = (era: '2025' | '2026', name: string, args: unknown) =>
    ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, ...(args === REMOVE ? {} : { arguments: args }), ...(era === '2026' ? { _meta: META_2026 } : {}) } })
  const mcpTargets: Target[] = app.registry.names().flatMap((name) => (['2025', '2026'] as const).map((era) => ({
    label: `MCP ${era} tools/call ${name}`,
    family: 'mcp' as const,
    op: name,
    pathParams: {},
    queryParams: {},
    bodySchema: app.registry.contract(name)!.input_schema as Schema,
    body: valid[name],
    key: ws.keys.service,
    kinds: surfaceKinds.mcp,
    request: (parts = {}) => ({
      method: 'POST' as const,
      url: '/mcp',
      headers: dropUndefined({ ...mcpHeaders(era, name), ...parts.headers }),
      payload: parts.body ?? jsonText(toolCall(era, name, valid[name])),
    }),
  })))
  const mcpBody = (target: Target, args: unknown) => jsonText(toolCall(target.label.includes(' 2026 ') ? '2026' : '2025', target.op!, args))

  // ---------------------------------------------------------------------------------------

  await t.test('one field of a valid call made bad: every operation, over REST and MCP', async (t) => {
    /**
     * The mutations of a valid body. An edge value the schema allows is sent to reads only (a
     * write would store it); a `schema` one the schema accepts is a fault of this generator, reported.
     */
    const soundMutations = (label: string, schema: Schema, base: unknown, op: string) => {
      const check = strictAjv.compile(schema)
      return mutations(schema, base, { extra: semantic(op), thorough: EVERY_SURFACE }).filter((m) => {
        if (m.badness === 'edge') return !writes(op)
        if (m.badness !== 'schema' || !check(structuredClone(setAt(base, m.path, m.value)))) return true
        t.fail(`${label}: ${m.label} is valid by the schema`)
        return false
      })
    }
    // `project` is the same argument, checked by the same code, in every project tool: by default
    // each of its bad values goes to every third tool (to all of them from FUZZ_RUNS=100); another
    // workspace's project goes to every one.
    const toolMutations = new Map(app.registry.names().map((name, n) => {
      const list = soundMutations(name, app.registry.contract(name)!.input_schema as Schema, valid[name], name)
      return [name, EVERY_SURFACE ? list : list.filter((m, i) => m.path[0] !== 'project' || m.badness === 'semantic' || (i + n) % 3 === 0)]
    }))
    t.pass(`${[...toolMutations.values()].reduce((n, l) => n + l.length, 0)} tool mutations, each refused by the schema or bad in a way it cannot say`)
    // Each tool mutation goes over REST or MCP (alternately), or over both from FUZZ_RUNS=100.
    const share = <T>(list: T[], k: number) => (EVERY_SURFACE ? list : list.filter((_, i) => i % 2 === k))
    const expectFor = (family: Family, m: Mutation): Expect => ({ family, reject: m.badness !== 'edge', field: m.badness === 'schema' && m.path.length > 0 ? pathText(m.path) : undefined })

    for (const group of chunks(apiTargets, 12)) {
      await batch(t, group.map((g) => g.label).join(', '), async () => {
        const problems: string[] = []
        for (const [index, target] of group.entries()) {
          const run = async (label: string, opts: InjectOptions, e: Expect) => {
            const res = await send(opts)
            const problem = judge(res, String(opts.method), e)
            if (problem) problems.push(`${target.label} ${label}: ${problem}`)
          }
          // The body: each field of it (a tool's arguments, or the body of a route), then whole bodies that are not arguments.
          if (target.bodySchema) {
            const isTool = target.label.startsWith('POST /v1/tools/')
            // A route's body is its operation's arguments less the path: half its mutations here, the tool call has them all.
            const list = isTool ? share(toolMutations.get(target.op!)!, 0) : share(soundMutations(target.label, target.bodySchema, target.body, target.op!), 1)
            for (const m of list) await run(m.label, target.request({ body: jsonText(setAt(target.body, m.path, m.value)) }), expectFor('api', m))
            for (const [label, body, reject] of wholeBodies(target.body, index === 0)) await run(label, target.request({ body }), { family: 'api', reject })
          }
          // The query string: each parameter's bad values as text, an unknown parameter.
          for (const [name, schema] of Object.entries(target.queryParams)) {
            const check = coercingAjv.compile(schema)
            for (const bad of [...badValues(schema, valid[target.op!]?.[name], EVERY_SURFACE), ...(semantic(target.op!)[name] ?? [])]) {
              const text = queryText(bad.value)
              if (!text || (bad.badness === 'text' && !text.some((v) => v.includes('\u0000')))) continue // a lone surrogate cannot travel in a URL
              // Valid once read as text ('null' for a string): not bad, unless an edge number, which any read may be sent.
              const accepted = (bad.badness === 'schema' || bad.badness === 'edge') && check(text.length === 1 ? text[0] : [...text])
              if (accepted && bad.badness === 'schema') continue
              const query = { ...Object.fromEntries([...new URL(`http://x${target.request().url}`).searchParams].map(([k, v]) => [k, [v]])), [name]: text }
              await run(`?${name}=${text.join('&').slice(0, 40)} (${bad.label})`, target.request({ query }), { family: 'api', reject: !accepted, field: bad.badness === 'schema' ? name : undefined })
            }
          }
          if (Object.keys(target.queryParams).length > 0) await run('?zzz_unknown=1', target.request({ query: { zzz_unknown: ['1'] } }), { family: 'api', reject: true, field: 'zzz_unknown' })
          // The CSV answer of the routes that have one (format=csv or Accept: text/csv): CSV when
          // valid, and every refusal the same, in the error shape (the export takes no page).
          if ('format' in target.queryParams) {
            const noPage = ['page', 'page_size', 'after']
            const base = Object.fromEntries([...new URL(`http://x${target.request().url}`).searchParams].filter(([k]) => !noPage.includes(k)).map(([k, v]) => [k, [v]]))
            for (const [label, opts] of [
              ['?format=csv', target.request({ query: { ...base, format: ['csv'] } })],
              ['Accept: text/csv', target.request({ query: base, headers: { accept: 'text/csv' } })],
            ] as const) {
              const res = await send(opts)
              if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/csv')) problems.push(`${target.label} ${label}: not CSV: ${res.statusCode} ${res.headers['content-type']}`)
            }
            for (const [name, schema] of Object.entries(target.queryParams)) {
              if (name === 'format') continue
              const check = coercingAjv.compile(schema)
              const refused = noPage.includes(name) // not an argument of the export, whatever its value
              for (const bad of badValues(schema, valid[target.op!]?.[name], EVERY_SURFACE)) {
                const text = queryText(bad.value)
                if (!text || (bad.badness === 'text' && !text.some((v) => v.includes('\u0000')))) continue
                const accepted = (bad.badness === 'schema' || bad.badness === 'edge') && check(text.length === 1 ? text[0] : [...text])
                if (accepted && bad.badness === 'schema' && !refused) continue
                const csv = index % 2 === 0 ? { query: { ...base, [name]: text, format: ['csv'] } } : { query: { ...base, [name]: text }, headers: { accept: 'text/csv' } }
                await run(`CSV ?${name}=${text.join('&').slice(0, 40)} (${bad.label})`, target.request(csv), { family: 'api', reject: refused || !accepted, field: refused || bad.badness === 'schema' ? name : undefined })
              }
            }
            await run('CSV ?zzz_unknown=1', target.request({ query: { ...base, zzz_unknown: ['1'] }, headers: { accept: 'text/csv' } }), { family: 'api', reject: true, field: 'zzz_unknown' })
          }
          // Path values: each parameter's bad strings (too long, a NUL, a lone surrogate, another workspace's id).
          for (const [name, schema] of Object.entries(target.pathParams)) {
            const check = coercingAjv.compile(schema)
            for (const bad of [...badValues(schema, undefined, EVERY_SURFACE), ...(semantic(target.op!)[fieldOf(name)] ?? [])]) {
              if (typeof bad.value !== 'string' || bad.value === '') continue
              if (bad.badness === 'schema' && check(bad.value)) continue
              await run(`/:${name} = ${JSON.stringify(bad.value).slice(0, 40)} (${bad.label})`, target.request({ path: { [name]: bad.value } }), { family: 'api', reject: true })
            }
          }
        }
        return problems
      })
    }

    for (const group of chunks(mcpTargets, 12)) {
      await batch(t, group.map((g) => g.label).join(', '), async () => {
        const problems: string[] = []
        for (const target of group) {
          const era = target.label.includes(' 2026 ') ? 1 : 0
          const list = share(toolMutations.get(target.op!)!, 1).filter((_, i) => EVERY_SURFACE || i % 2 === era)
          for (const m of list) {
            const res = await send(target.request({ body: mcpBody(target, setAt(target.body, m.path, m.value)) }))
            const problem = judge(res, 'POST', expectFor('mcp', m))
            if (problem) problems.push(`${target.label} ${m.label}: ${problem}`)
          }
          for (const [label, args, reject] of [['arguments = []', [], true], ['arguments = "x"', 'x', true], ['arguments = 7', 7, true], ['arguments nested 70 deep', deeplyNested(), true], ['no arguments', REMOVE, false]] as const) {
            const res = await send(target.request({ body: mcpBody(target, args) }))
            const problem = judge(res, 'POST', { family: 'mcp', reject: reject && (target.bodySchema?.required?.length ?? 0) > 0 })
            if (problem) problems.push(`${target.label} ${label}: ${problem}`)
          }
        }
        return problems
      })
    }
  })

  await t.test('random arguments and query strings', async (t) => {
    const anything = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.string({ unit: 'binary', maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }))
    /** RUNS random cases for one target: a body's fields set to anything, or a query string and path values. */
    const randomCases = (target: Target): Promise<string[]> => {
      if (target.bodySchema) {
        const arb = fc.oneof(arbitraryMutation(target.bodySchema, target.body), anything.map((a) => ({ label: jsonText(a).slice(0, 80), args: a })))
        // MCP targets are one per era: half the cases each.
        return property(arb, target.family === 'mcp' ? Math.ceil(RUNS / 2) : RUNS, async ({ label, args }) => {
          // A random change may be valid: a write that succeeds would change the database.
          if (writes(target.op!) && strictAjv.validate(target.bodySchema!, structuredClone(args))) return null
          const opts = target.family === 'mcp' ? target.request({ body: mcpBody(target, args) }) : target.request({ body: jsonText(args) })
          const problem = judge(await send(opts), 'POST', { family: target.family, reject: false })
          return problem && `${target.label} ${label}: ${problem}`
        })
      }
      const names = Object.keys(target.queryParams)
      const arb = fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 6 })), fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('1e300', 'Infinity', '-1', '0', '5e17', '', '\u0000', 'NaN', '0x10', '1_000')), { minLength: 1, maxLength: 2 }), { maxKeys: 4 })
      const pathArb = fc.dictionary(fc.constantFrom(...Object.keys(target.pathParams), 'none'), fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }), { maxKeys: 2 })
      return property(fc.tuple(arb, pathArb), RUNS, async ([query, path]) => {
        const opts = target.request({ query, path })
        const problem = judge(await send(opts), 'GET', { family: 'api', reject: false })
        return problem && `${opts.url}: ${problem}`
      })
    }
    const targets = [...apiTargets, ...mcpTargets].filter((x) => x.bodySchema || Object.keys(x.queryParams).length > 0)
    for (const group of chunks(targets, 16)) {
      await batch(t, `${RUNS} random cases each: ${group.map((g) => g.label).join(', ')}`, async () => {
        const problems: string[] = []
        for (const target of group) problems.push(...await randomCases(target))
        return problems
      })
    }
  })

  // ---------------------------------------------------------------------------------------

  await t.test('/mcp: bad JSON-RPC messages and envelopes', async (t) => {
    const base2025 = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_overview', arguments: { project: P } } }
    const base2026 = { ...base2025, params: { ...base2025.params, _meta: META_2026 } }
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } }
    const fields: [string, unknown[]][] = [
      ['jsonrpc', [REMOVE, '1.0', 2, null, '']],
      ['id', [null, {}, [], true, 1e300, 'x'.repeat(5000)]],
      ['method', [REMOVE, '', 'nope', 7, 'tools/call ', 'x'.repeat(5000), '__proto__', 'constructor', 'rpc.discover']],
      ['params', [REMOVE, null, 7, [], 'x', {}, { name: 7 }, { name: 'no_such_tool', arguments: {} }, { name: 'get_overview', arguments: { project: P }, _meta: 'x' }, { name: 'get_overview', arguments: { project: P }, _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } }]],
    ]
    const cases: [string, string, Record<string, string>, boolean][] = []
    for (const [era, base] of [['2025', base2025], ['2026', base2026]] as const) {
      for (const [field, values] of fields) {
        // A long string or a huge number is still a JSON-RPC id: those requests may succeed.
        for (const value of values) cases.push([`${era} ${field} = ${jsonText(value === REMOVE ? '(removed)' : value).slice(0, 40)}`, jsonText(setAt(base, [field], value)), mcpHeaders(era, 'get_overview'), !(field === 'id' && (typeof value === 'string' || typeof value === 'number'))])
      }
      const headers = mcpHeaders(era, 'get_overview')
      for (const body of ['', 'x', '{', '[]', '[1]', 'null', '1', '"s"', '{"jsonrpc":"2.0"', `${'['.repeat(5000)}${']'.repeat(5000)}`, jsonText([base, base]), 'x'.repeat(1024 * 1024 + 10)]) {
        cases.push([`${era} body ${JSON.stringify(body.slice(0, 20))}${body.length > 20 ? `… (${body.length} bytes)` : ''}`, body, headers, body !== jsonText([base, base])])
      }
      const headerCases: [string, string[]][] = [
        ['content-type', ['text/plain', 'application/xml', '', 'multipart/form-data; boundary=x', 'application/jsonx']],
        ['mcp-protocol-version', ['', '2024-01-01', 'x'.repeat(300), '2025-11-25, 2026-07-28']],
        ['accept', ['text/html', '', 'x'.repeat(300)]],
      ]
      for (const [name, values] of headerCases) {
        for (const value of values) cases.push([`${era} ${name}: ${value.slice(0, 30)}`, jsonText(base), { ...headers, [name]: value }, name === 'content-type'])
      }
    }
    const mismatches: [string, string][] = [['mcp-method', 'tools/list'], ['mcp-method', ''], ['mcp-name', 'get_daily_ops'], ['mcp-name', ''], ['mcp-method', 'x'.repeat(300)]]
    for (const [name, value] of mismatches) {
      cases.push([`2026 ${name}: ${value.slice(0, 30)} (does not match the body)`, jsonText(base2026), { ...mcpHeaders('2026', 'get_overview'), [name]: value }, true])
    }
    cases.push(['2025 initialize with protocolVersion 7', jsonText(setAt(initialize, ['params', 'protocolVersion'], 7)), mcpHeaders('2025', 'x'), true])
    cases.push(['2025 initialize without clientInfo', jsonText(setAt(initialize, ['params', 'clientInfo'], REMOVE)), mcpHeaders('2025', 'x'), true])
    cases.push(['2025 resources/read of an unknown URI', jsonText({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///etc/passwd' } }), mcpHeaders('2025', 'x'), true])
    cases.push(['2025 prompts/get of an unknown prompt', jsonText({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'nope' } }), mcpHeaders('2025', 'x'), true])
    await batch(t, `${cases.length} bad messages`, async () => {
      const problems: string[] = []
      for (const [label, payload, headers, reject] of cases) {
        const problem = judge(await send({ method: 'POST', url: '/mcp', headers, payload }), 'POST', { family: 'mcp', reject })
        if (problem) problems.push(`${label}: ${problem}`)
      }
      return problems
    })
    await batch(t, `${RUNS * 4} random messages`, () => {
      const message = fc.oneof(
        fc.jsonValue({ maxDepth: 4 }),
        fc.record({ jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue()), id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()), method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'initialize', 'resources/read', 'prompts/get', 'server/discover', 'ping'), fc.string()), params: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] })
      )
      return property(fc.tuple(message, fc.constantFrom('2025', '2026')), RUNS * 4, async ([m, era]) => {
        const problem = judge(await send({ method: 'POST', url: '/mcp', headers: mcpHeaders(era as '2025' | '2026', 'get_overview'), payload: jsonText(m) }), 'POST', { family: 'mcp', reject: false })
        return problem && `${jsonText(m).slice(0, 100)}: ${problem}`
      })
    })
  })

  await t.test('OAuth endpoints', async (t) => {
    const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = form) =>
      send({ method: 'POST', url, headers, payload: headers['content-type']?.includes('json') ? JSON.stringify(fields) : new URLSearchParams(fields).toString() })
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...creds }
    const code = { grant_type: 'authorization_code', code: unspentCode, code_verifier: verifier, redirect_uri: REDIRECT, ...creds }
    const strings = ['', 'x', 'x'.repeat(3000), 'a\u0000b', 'a\ud800', ' ', '%']
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`
    // Basic credentials take the place of those in the body: each of these is a client that cannot use the token.
    const basics = [basic(`${client.client_id}:wrong`), basic('%zz:%zz'), basic(client.client_id), 'Basic !!!', `Basic ${'A'.repeat(8000)}`, basic(`${publicClient.client_id}:`)]
    await batch(t, 'token endpoint: one field of a valid request made bad', async () => {
      const problems: string[] = []
      for (const [what, base] of [['refresh', refresh], ['code', code]] as const) {
        for (const field of Object.keys(base)) {
          const values = [REMOVE, ...strings, ...(field === 'client_id' ? [publicClient.client_id, `${client.client_id}x`] : []), ...(field === 'grant_type' ? ['password', 'client_credentials', 'REFRESH_TOKEN'] : []), ...(field === 'code_verifier' ? ['w'.repeat(43), 'v'.repeat(42), 'v'.repeat(129)] : []), ...(field === 'redirect_uri' ? [`${REDIRECT}/x`, 'http://evil.example/cb'] : [])]
          for (const value of values) {
            const fields = setAt(base, [field], value) as Record<string, string>
            for (const headers of [form, { 'content-type': 'application/json' }]) {
              const problem = judge(await post('/oauth/token', fields, headers), 'POST', { family: 'oauth', reject: true })
              if (problem) problems.push(`${what} ${field} = ${String(value === REMOVE ? '(removed)' : value).slice(0, 30)} (${headers['content-type']}): ${problem}`)
            }
          }
        }
        for (const value of ['https://evil.example/mcp', `${PUBLIC_URL}/mcp/`, `${PUBLIC_URL}/MCP`]) {
          const problem = judge(await post('/oauth/token', { ...base, resource: value }), 'POST', { family: 'oauth', reject: true })
          if (problem) problems.push(`${what} resource = ${value}: ${problem}`)
        }
        for (const authorization of basics) {
          const problem = judge(await post('/oauth/token', base, { ...form, authorization }), 'POST', { family: 'oauth', reject: !authorization.includes(basic(`${publicClient.client_id}:`)) })
          if (problem) problems.push(`${what} Authorization: ${authorization.slice(0, 40)}: ${problem}`)
        }
      }
      for (const [label, payload, type] of [['text/plain', 'grant_type=refresh_token', 'text/plain'], ['a JSON array', '[]', 'application/json'], ['malformed JSON', '{', 'application/json'], ['no body', '', 'application/x-www-form-urlencoded'], ['deep JSON', `${'['.repeat(5000)}${']'.repeat(5000)}`, 'application/json']]) {
        const problem = judge(await send({ method: 'POST', url: '/oauth/token', headers: { 'content-type': type }, payload }), 'POST', { family: 'oauth', reject: true })
        if (problem) problems.push(`token ${label}: ${problem}`)
      }
      return problems
    })
    await batch(t, 'revocation: bad client credentials, and another client revoking this one’s tokens', async () => {
      const problems: string[] = []
      for (const token of [tokens.refresh_token, tokens.access_token]) {
        const cases: [string, Record<string, string>, Record<string, string>, boolean][] = [
          ['another client', { token, ...otherCreds }, form, false],
          ['a public client', { token, client_id: publicClient.client_id }, form, false],
          ['a wrong secret', { token, ...creds, client_secret: 'wrong' }, form, true],
          ['no client', { token }, form, true],
          ['no token', { ...creds }, form, true],
          ...basics.map((authorization): [string, Record<string, string>, Record<string, string>, boolean] => [`Authorization: ${authorization.slice(0, 30)}`, { token }, { ...form, authorization }, authorization !== basic(`${publicClient.client_id}:`)]),
          ...strings.map((s): [string, Record<string, string>, Record<string, string>, boolean] => [`token = ${JSON.stringify(s.slice(0, 10))}`, { token: s, ...creds }, form, s === ''])
        ]
        for (const [label, fields, headers, reject] of cases) {
          const problem = judge(await post('/oauth/revoke', fields, headers), 'POST', { family: 'oauth', reject })
          if (problem) problems.push(`revoke with ${label}: ${problem}`)
        }
      }
      return problems
    })
    await batch(t, 'registration: one field of a valid request made bad', async () => {
      const problems: string[] = []
      const base = { client_name: 'x', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }
      const bad: [string, unknown[]][] = [
        ['redirect_uris', [REMOVE, [], 'https://a.example/cb', [7], ['javascript:alert(1)'], ['http://evil.example/cb'], ['https://a.example/cb#x'], [`https://a.example/${'x'.repeat(2048)}`], Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`), ['data:text/html,x'], ['not a uri'], [null], deeplyNested()]],
        ['token_endpoint_auth_method', ['private_key_jwt', '', 7, 'NONE']],
        ['grant_types', [['implicit'], 'authorization_code', [7], ['password', 'refresh_token'], {}]],
      ]
      for (const [field, values] of bad) {
        for (const value of values) {
          const problem = judge(await send({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/json' }, payload: jsonText(setAt(base, [field], value)) }), 'POST', { family: 'oauth', reject: true })
          if (problem) problems.push(`register ${field} = ${jsonText(value).slice(0, 40)}: ${problem}`)
        }
      }
      for (const [label, payload, type] of [['text/plain', 'x', 'text/plain'], ['a JSON array', '[]', 'application/json'], ['malformed JSON', '{', 'application/json'], ['null', 'null', 'application/json'], ['a form', 'redirect_uris=x', 'application/x-www-form-urlencoded'], ['__proto__', '{"__proto__":{"redirect_uris":["https://a.example/cb"]}}', 'application/json']]) {
        const problem = judge(await send({ method: 'POST', url: '/oauth/register', headers: { 'content-type': type }, payload }), 'POST', { family: 'oauth', reject: true })
        if (problem) problems.push(`register ${label}: ${problem}`)
      }
      problems.push(...await property(fc.dictionary(fc.constantFrom('redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'client_name', 'x'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).filter((d) => !Array.isArray(d.redirect_uris) || !d.redirect_uris.every((u) => typeof u === 'string' && /^(https:\/\/|http:\/\/127\.|[a-z]+:)/.test(u))), RUNS, async (body) => {
        const problem = judge(await send({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/json' }, payload: jsonText(body) }), 'POST', { family: 'oauth', reject: true })
        return problem && `register ${jsonText(body).slice(0, 100)}: ${problem}`
      }))
      return problems
    })
  })

  await t.test('the console and the authorization page: forms and pages', async (t) => {
    const consoleRoutes = routes.filter((r) => r.url.startsWith('/console') || r.url === '/oauth/authorize')
    const idFor = (url: string) => (url.includes('/keys/') ? spareKey.id : url.includes('/connections/') ? grantId : url.includes('/webhooks/') ? hook : url.includes('/members/') ? viewer.user.id : url.includes('/invitations/') ? invitationId : url.includes('/comments/:id') ? comment : opp)
    const savedView = (await app.repos.savedViews.save({ projectId: P, userId: ws.user.id, name: 'Fuzzed view', filters: { status: 'pending' }, shared: false, now: new Date() })).view.view_id
    const otherView = (await app.repos.savedViews.save({ projectId: other.project.id, userId: other.user.id, name: 'Theirs', filters: {}, shared: true, now: new Date() })).view.view_id
    const defaults: Record<string, string> = { project: ws.project.slug, id: opp, file: 'console.css', delivery: message, token: inviteToken, ref: 'ffffffffffffffff', view_id: savedView }
    const pathFor = (url: string, values: Record<string, string> = {}) => fill(url, { ...defaults, id: idFor(url), ...values })
    const badPath = ['x', 'a'.repeat(101), 'a\u0000b', '\ud800', '..', other.project.id, otherOpp, otherKeyId, otherGrant]
    const badQuery: Record<string, string>[] = [{ page: '1e300' }, { page: '-1' }, { page_size: '5e17' }, { status: 'nope' }, { window: 'x' }, { next: '//evil.example' }, { next: 'https://evil.example' }, { next: '/\\evil.example' }, { date: '\u0000' }, { type: 'x'.repeat(300) }, { evaluation: '' }, { client_id: 'x' }, { tag: 'x'.repeat(41) }, { tag: 'a\u0000b' }, { assignee: 'x'.repeat(300) }, { assignee: 'nobody@example.test' }]
    const isForm = (r: { method: string }) => r.method === 'POST'

    /** Per console form: a valid submission, and the fields that make it bad (and that change nothing when refused). */
    const forms: Record<string, { valid: Record<string, string>; bad: Record<string, string[]> } | 'csrf-only'> = {
      'POST /console/login': { valid: { email: ws.user.email, password: 'not-the-password' }, bad: { email: ['', 'x'.repeat(5000), 'a\u0000b', viewer.user.email], password: ['', 'x'.repeat(5000)] } },
      'POST /console/logout': 'csrf-only',
      'POST /console/profile/mcp-access': 'csrf-only',
      'POST /console/projects/:project/opportunities/:id/review': {
        valid: { evaluation: 'useful', status: 'reviewing', note: 'n', orig_evaluation: '', orig_status: 'pending', orig_note: '', back: '/console' },
        bad: { evaluation: ['nope', 'USEFUL', 'a\u0000'], status: ['nope', ''], note: ['x'.repeat(2001), 'a\u0000b'], ':id': badPath, ':project': badPath },
      },
      'POST /console/projects/:project/opportunities/bulk-review': {
        valid: { event_ids: opp, status: 'reviewing', evaluation: 'useful', back: '/console' },
        bad: { event_ids: [otherOpp, 'opp_doesnotexist000', 'x', '', 'a\u0000b'], status: ['nope', 'USEFUL'], evaluation: ['nope', 'a\u0000'], ':project': badPath },
      },
      'POST /console/projects/:project/opportunities/:id/comments': {
        valid: { body: 'A comment', back: '/console' },
        bad: { body: ['', ' \n ', 'x'.repeat(4001), 'a\u0000b'], parent_id: ['x', 'cmt_doesnotexist000', 'a\u0000b'], ':id': badPath, ':project': badPath },
      },
      'POST /console/projects/:project/comments/:id/edit': {
        valid: { body: 'Edited', back: '/console' },
        bad: { body: ['', ' ', 'x'.repeat(4001), 'a\u0000b'], ':id': [...badPath, 'cmt_doesnotexist000'], ':project': badPath },
      },
      'POST /console/projects/:project/opportunities/:id/merge': {
        valid: { source_id: otherOpp, version: '1', back: '/console' },
        bad: { source_id: ['', 'x', otherOpp, 'opp_doesnotexist000', 'a\u0000b', opp], version: ['0', 'x', '99999', '1e3'], back: ['//evil.example', 'https://evil.example'], ':id': badPath, ':project': badPath },
      },
      'POST /console/projects/:project/opportunities/:id/unmerge': { valid: { back: '/console' }, bad: { ':id': [...badPath, opp], ':project': badPath } },
      'POST /console/projects/:project/opportunities/:id/tags': {
        valid: { add: 'fuzzed', version: '99999', back: '/console' },
        bad: { add: ['', ' ', 'x'.repeat(41), 'a\u0000b', '\ud800'], version: ['0', 'x', '99999'], ':id': badPath, ':project': badPath },
      },
      'POST /console/projects/:project/opportunities/:id/assign': {
        valid: { assignee: 'nobody@example.test', back: '/console' },
        bad: { assignee: ['nobody@example.test', 'x'.repeat(300), 'a\u0000b', other.user.id, '\ud800'], version: ['0', 'x'], ':id': badPath, ':project': badPath },
      },
      'POST /console/projects/:project/comments/:id/delete': { valid: { back: '/console' }, bad: { ':id': [...badPath, 'cmt_doesnotexist000'], ':project': badPath } },
      'POST /console/projects': {
        valid: { name: 'Fuzzed', slug: 'fuzzed', timezone: 'UTC', description: 'd' },
        bad: { name: ['', ' ', 'x'.repeat(201), 'a\u0000b'], slug: ['', 'Bad Slug', ws.project.slug, '-x', 'x'.repeat(65), 'a\u0000b', '\ud800'], timezone: ['Mars/Base', 'Europe/Nowhere', 'a\u0000b', 'x'.repeat(65)], description: ['x'.repeat(5001), 'a\u0000b'] },
      },
      'POST /console/keys': { valid: { kind: 'ingest', project: P, name: 'k' }, bad: { kind: ['', 'nope', 'oauth', 'mcp '], project: [other.project.id, 'no-such-project', '', 'a\u0000b'] } },
      'POST /console/keys/:id/revoke': { valid: { back: '/console/keys' }, bad: { ':id': badPath } },
      'POST /console/workspace/tools/:name': { valid: { enabled: 'true' }, bad: { ':name': ['no_such_tool', 'a'.repeat(101), 'a\u0000b', 'ingest_events', '\ud800'] } },
      'POST /console/connections/:id/revoke': { valid: {}, bad: { ':id': badPath } },
      'POST /console/projects/:project/webhooks': {
        valid: { url: 'https://example.com/hook', events: 'memory.added', description: 'd' },
        bad: { url: ['', 'http://example.com/x', 'https://10.0.0.1/x', 'x'.repeat(2001), 'a\u0000b'], events: ['', 'nope', 'a\u0000b'], description: ['x'.repeat(501)], ':project': badPath, format: ['teams', 'a\u0000b'], signatures: ['v2', 'a\u0000b'], rate_limit: ['0', '1001', '1.5', 'x', '1e999'] },
      },
      'POST /console/projects/:project/webhooks/:id/rotate': { valid: {}, bad: { ':id': [...badPath, otherHook], ':project': badPath } },
      'POST /console/projects/:project/webhooks/:id/test': { valid: {}, bad: { ':id': [...badPath, otherHook] } },
      'POST /console/projects/:project/webhooks/:id/enable': { valid: {}, bad: { ':id': [...badPath, otherHook], ':project': badPath } },
      'POST /console/projects/:project/webhooks/:id/delete': { valid: {}, bad: { ':id': [...badPath, otherHook] } },
      'POST /console/projects/:project/webhooks/:id/deliveries/:delivery/redeliver': { valid: {}, bad: { ':id': [...badPath, otherHook], ':delivery': ['msg_doesnotexist000', 'x', 'a\u0000b'] } },
      'POST /console/projects/:project/views': {
        valid: { name: 'Fuzzed view', status: 'pending', back: '/console' },
        bad: { name: ['', ' ', 'x'.repeat(81), 'a\u0000b', 'two\nlines'], status: ['nope', 'a\u0000b'], type: ['Not A Type'], q: ['x'.repeat(201)], ':project': badPath },
      },
      'POST /console/projects/:project/digest': {
        valid: { frequency: 'weekly', hour: '8', weekday: '1', enabled: 'on' },
        bad: { frequency: ['', 'monthly', 'a\u0000b'], hour: ['', '24', '-1', '9.5', 'x'.repeat(300), 'a\u0000b'], weekday: ['0', '8', 'funday', 'a\u0000b', 'x'.repeat(30)], ':project': badPath },
      },
      'POST /console/projects/:project/digest/delete': { valid: {}, bad: { ':project': badPath } },
      'POST /console/projects/:project/alerts': {
        valid: { name: 'Fuzzed', metric: 'daily_users', condition: 'below', threshold: '3' },
        bad: {
          name: ['', ' ', 'x'.repeat(201), 'a\u0000b'],
          metric: ['', 'nope', 'a\u0000b'],
          condition: ['', 'sideways', 'a\u0000b'],
          threshold: ['', 'x', '1e999', '-1e999'],
          event: ['x'.repeat(201), 'a\u0000b'],
          ':project': badPath,
        },
      },
      'POST /console/projects/:project/alerts/:id/enabled': { valid: { enabled: 'false' }, bad: { ':id': [...badPath, 'alr_doesnotexist000'], ':project': badPath } },
      'POST /console/projects/:project/alerts/:id/delete': { valid: {}, bad: { ':id': [...badPath, 'alr_doesnotexist000'], ':project': badPath } },
      'POST /console/projects/:project/views/:view_id/delete': { valid: { back: '/console' }, bad: { ':view_id': [...badPath, otherView, 'view_doesnotexist000'], ':project': badPath } },
      'POST /console/forgot': { valid: { email: 'nobody@example.test' }, bad: { email: ['', 'x'.repeat(5000), 'a\u0000b', 'not-an-email', viewer.user.email] } },
      'POST /console/reset/:token': {
        valid: { password: 'a long enough new password', repeat: 'a long enough new password' },
        bad: { ':token': [...badPath, `gdp_${'A'.repeat(38)}`, 'gdp_x'], password: ['', 'short', 'x'.repeat(5000), 'a\u0000b'], repeat: ['', 'other'] },
      },
      'POST /console/profile/password': {
        // Never the right current password: a bad field must change nothing.
        valid: { current: 'not-the-password', password: 'a long enough new password', repeat: 'a long enough new password' },
        bad: { current: ['', 'x'.repeat(5000), 'a\u0000b'], password: ['', 'short', 'x'.repeat(5000), 'a\u0000b', ws.user.email], repeat: ['', 'other'] },
      },
      'POST /console/profile/sessions/:ref/sign-out': { valid: {}, bad: { ':ref': [...badPath, 'ffffffffffffffff', '0123456789abcdef'] } },
      'POST /console/profile/sessions/sign-out-others': 'csrf-only',
      'POST /console/members/reset-link': { valid: { email: other.user.email, back: '/console' }, bad: { email: ['', 'x'.repeat(5000), 'a\u0000b', 'nobody@example.test', ws.user.email], back: ['//evil.example', 'https://evil.example'] } },
      'POST /console/members/invite': {
        valid: { email: 'fuzzed@example.com', [`role_${P}`]: 'viewer' },
        bad: { email: ['', 'x', 'a\u0000b', `${'x'.repeat(300)}@example.com`, viewer.user.email, other.user.email], [`role_${P}`]: ['admin', 'none', '', 'a\u0000b'], [`role_${other.project.id}`]: ['viewer'] },
      },
      'POST /console/members/:id/role': { valid: { project: P, role: 'owner' }, bad: { role: ['admin', '', 'a\u0000b'], project: [other.project.id, 'no-such-project', '', 'a\u0000b'], ':id': [...badPath, ws.user.id] } },
      'POST /console/members/:id/remove-from-project': { valid: { project: P }, bad: { project: [other.project.id, 'no-such-project', '', 'a\u0000b'], ':id': [...badPath, ws.user.id] } },
      'POST /console/members/:id/remove': { valid: {}, bad: { ':id': [...badPath, ws.user.id] } },
      'POST /console/invitations/:id/cancel': { valid: {}, bad: { ':id': [...badPath, 'inv_doesnotexist000'] } },
      'POST /console/invite/:token': {
        valid: { password: 'a long enough password', repeat: 'a long enough password' },
        bad: { password: ['', 'short', 'a\u0000b'.repeat(5), 'x'.repeat(201)], repeat: ['', 'another long password'], ':token': ['x', 'gdv_doesnotexist', generateSecret(linkTokenPrefixes.invitation), generateSecret(linkTokenPrefixes.passwordReset), 'a\u0000b', '\ud800'] },
      },
      'POST /oauth/authorize': {
        valid: {},
        bad: {
          client_id: ['', 'cli_nope', 'https://10.0.0.1/client.json', 'http://127.0.0.1/x.json', 'a\u0000b'],
          redirect_uri: ['', 'http://evil.example/cb', `${REDIRECT}#x`],
          code_challenge: ['', 'short', 'x'.repeat(200)],
          code_challenge_method: ['plain', ''],
          response_type: ['token', ''],
          resource: ['https://evil.example/mcp', ''],
          decision: ['deny', '', 'ALLOW'],
        },
      },
    }
    const consent = Object.fromEntries(Object.entries({ ...(await consentFields()), decision: 'allow' }).filter(([k]) => k !== '_csrf'))

    await batch(t, 'forms without a session, without a form token, and with bad fields', async () => {
      const problems: string[] = []
      const post = async (label: string, url: string, fields: Record<string, string>, headers: Record<string, string>, redirectTo?: string) => {
        const res = await send({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(fields).toString() })
        const problem = judge(res, 'POST', { family: 'console', reject: true, redirectTo })
        if (problem) problems.push(`${label}: ${problem}`)
        return res
      }
      for (const route of consoleRoutes.filter(isForm)) {
        const key = routeKey(route)
        const spec = forms[key]
        if (!spec) {
          problems.push(`${key}: a console form this test does not know; add it to \`forms\``)
          continue
        }
        const fields = spec === 'csrf-only' ? {} : route.url === '/oauth/authorize' ? consent : spec.valid
        const url = pathFor(route.url)
        const redirectTo = route.url === '/oauth/authorize' ? REDIRECT : undefined
        // No session at all (a stranger), a forged or broken session cookie, then a session without the form token.
        for (const c of ['', 'gd_session=forged', 'gd_session=s%3Aabc.def', `gd_csrf=${'x'.repeat(3000)}`, 'gd_session=; gd_session=x']) {
          const res = await post(`${key} with cookie ${JSON.stringify(c.slice(0, 30))}`, url, { ...fields, _csrf: csrf }, c ? { cookie: c } : {})
          if (route.url !== '/console/login' && res.statusCode === 302 && !String(res.headers.location).startsWith('/console/login')) problems.push(`${key} without a session went to ${res.headers.location}`)
        }
        for (const token of [undefined, '', 'x', csrf.slice(0, -1), `${csrf}x`]) {
          const res = await post(`${key} with form token ${JSON.stringify(token)}`, url, { ...fields, ...(token === undefined ? {} : { _csrf: token }) }, { cookie: cookie() })
          if (res.statusCode !== 403 && res.statusCode !== 429) problems.push(`${key} with form token ${JSON.stringify(token)}: ${res.statusCode}, not 403`)
        }
        if (spec === 'csrf-only') continue
        // Signed in, with the token: one field made bad.
        for (const [field, values] of Object.entries(spec.bad)) {
          // Each sign-in attempt costs a password hash: two bad values each for the sign-in form.
          for (const value of route.url === '/console/login' ? values.slice(0, 2) : values) {
            const target = field.startsWith(':') ? pathFor(route.url, { [field.slice(1)]: value }) : url
            const body = field.startsWith(':') ? fields : { ...fields, [field]: value }
            await post(`${key} ${field} = ${JSON.stringify(value).slice(0, 30)}`, target, { ...body, _csrf: csrf }, { cookie: cookie() }, redirectTo)
          }
        }
      }
      return problems
    })

    await batch(t, 'pages with odd paths and query strings, signed in and not', async () => {
      const problems: string[] = []
      // GET only: HEAD is the same handler (and is sent below, with the other methods).
      for (const route of consoleRoutes.filter((r) => r.method === 'GET')) {
        const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]!)
        const urls = [pathFor(route.url), ...params.flatMap((p) => [...badPath, ...(p === 'file' ? ['../../package.json', 'console.css\u0000'] : [])].map((v) => pathFor(route.url, { [p]: v })))]
        // Odd query strings for the pages that read one; the others get one unknown parameter.
        const query = route.url === '/oauth/authorize'
          ? [authorizeQuery, ...Object.keys(authorizeQuery).flatMap((k) => [setAt(authorizeQuery, [k], REMOVE), setAt(authorizeQuery, [k], 'x'), setAt(authorizeQuery, [k], 'a\u0000b')]) as Record<string, string>[]]
          : /\/(opportunities|metrics|login)$|\/(opportunities|metrics|event-summary)\.csv$/.test(route.url) ? [{}, ...badQuery] : [{}, { x: '%zz' }]
        for (const [i, url] of urls.entries()) {
          for (const q of i === 0 ? query : [{}]) {
            // Signed in, and (for the page itself and its odd query strings) a stranger.
            for (const headers of i === 0 ? [{ cookie: cookie() }, {}] : [{ cookie: cookie() }]) {
              const full = withQuery(url, Object.fromEntries(Object.entries(q as Record<string, string>).map(([k, v]) => [k, [v]])))
              const res = await send({ method: route.method as InjectOptions['method'], url: full, headers })
              const problem = judge(res, route.method, { family: 'console', reject: false, redirectTo: REDIRECT })
              if (problem) problems.push(`${route.method} ${full}${headers.cookie ? ' (signed in)' : ''}: ${problem}`)
              if (/"name": "growthdesk"|root:x:0:0/.test(res.body)) problems.push(`${full}: served a file from outside its folder`)
            }
          }
        }
      }
      return problems
    })

    await batch(t, `${RUNS * 2} random form posts`, async () => {
      const forms = consoleRoutes.filter(isForm)
      return property(fc.tuple(fc.constantFrom(...forms), fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 100 }), { maxKeys: 5 }), fc.boolean(), fc.string({ unit: 'binary', minLength: 1, maxLength: 120 })), RUNS * 2, async ([route, fields, withToken, segment]) => {
        if (route.url === '/console/login' && withToken) return null // a sign-in attempt costs a password hash
        const url = route.url.includes(':') ? pathFor(route.url, Object.fromEntries([...route.url.matchAll(/:(\w+)/g)].map((m) => [m[1]!, segment]))) : route.url
        const res = await send({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() }, payload: new URLSearchParams({ ...fields, ...(withToken ? {} : { _csrf: 'bad' }) }).toString() })
        // With the form token, a random form may be a valid one (a key named anything is a key): no change asserted there.
        const problem = judge(res, 'POST', { family: 'console', reject: !withToken, redirectTo: REDIRECT })
        return problem && `${url} ${JSON.stringify(fields).slice(0, 80)}: ${problem}`
      })
    })
  })

  await t.test('public documents, unknown routes, other methods and HEAD', async (t) => {
    const publicRoutes = routes.filter((r) => (r.method === 'GET' || r.method === 'HEAD') && !r.url.startsWith('/console') && !r.url.startsWith('/api/') && !r.url.startsWith('/v1/') && r.url !== '/mcp' && r.url !== '/oauth/authorize')
    await batch(t, 'public documents with odd query strings and paths', async () => {
      const problems: string[] = []
      for (const route of publicRoutes) {
        // Wildcard tails as they go in the URL (already encoded): traversals, a NUL, a lone surrogate's bytes.
        const tails = route.url.endsWith('*') ? ['x', '../../package.json', '..%2F..%2Fpackage.json', '%2e%2e/%2e%2e/package.json', 'a%00b', 'index.html', '%ED%A0%80', 'x'.repeat(300)] : ['']
        for (const tail of tails) {
          for (const query of ['', '?a=1', '?url=https://evil.example', `?x=${'y'.repeat(3000)}`, '?%zz', '?a[b]=1&a=2']) {
            const url = `${route.url.replace('*', tail)}${query}`
            const res = await send({ method: route.method as InjectOptions['method'], url })
            const problem = judge(res, route.method, { family: 'public', reject: false })
            if (problem) problems.push(`${route.method} ${url}: ${problem}`)
            if (/"name": "growthdesk"|root:x:0:0/.test(res.body)) problems.push(`${url}: served a file from outside its folder`)
          }
        }
      }
      return problems
    })
    await batch(t, 'other methods on every path, HEAD on every GET, unknown paths', async () => {
      const problems: string[] = []
      // Which route, if any, serves a method on a concrete path (a parametric route may: GET /v1/tools/get_overview is get_tool).
      const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true })
      for (const r of routes) router.on(r.method as HTTPMethod, r.url === '*' ? '/*' : r.url, () => {})
      for (const url of new Set(routes.map((r) => r.url))) {
        if (url === '*') continue
        const concrete = fill(url, { ...defaults(url), '*': 'x' })
        for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
          const served = router.find(method, concrete) !== null && !(method === 'OPTIONS')
          // A served write is fuzzed elsewhere (here it would write); reads, and DELETE /mcp (always a 405), are sent.
          if (served && !['GET', 'HEAD'].includes(method) && url !== '/mcp') continue
          const key = url.startsWith('/api/v1/mcp') ? ws.keys.mcp : ws.keys.service
          const res = await send({ method, url: `${concrete}?x=%zz&page=1e300`, headers: { ...bearer(key), ...(url === '/mcp' ? { host: MCP_HOST } : {}) } })
          const family: Family = url.startsWith('/console') || url === '/oauth/authorize' ? 'console' : url === '/mcp' ? 'mcp' : 'public'
          const problem = judge(res, method, { family, reject: !served && method !== 'OPTIONS' })
          if (problem) problems.push(`${method} ${concrete}: ${problem}`)
        }
      }
      // Names after /v1/tools/ that are not tools: operations that are not tools, prototype names, odd text.
      for (const name of ['no_such_tool', 'ingest_events', 'create_key', 'revoke_key', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'A', 'a'.repeat(64), 'a'.repeat(101), 'a\u0000b', '\ud800', '..']) {
        for (const method of ['GET', 'POST'] as const) {
          const res = await send({ method, url: `/v1/tools/${urlEncode(name)}`, headers: json(ws.keys.service), payload: method === 'POST' ? '{}' : undefined })
          const problem = judge(res, method, { family: 'api', reject: true })
          if (problem) problems.push(`${method} /v1/tools/${JSON.stringify(name).slice(0, 20)}: ${problem}`)
        }
      }
      // CORS preflights, allowed and not.
      for (const origin of [PUBLIC_URL, 'http://evil.example', 'null', '']) {
        for (const requested of ['POST', 'TRACE', 'x'.repeat(200)]) {
          const res = await send({ method: 'OPTIONS', url: '/mcp', headers: { origin, 'access-control-request-method': requested, 'access-control-request-headers': 'authorization, x-evil' } })
          const problem = judge(res, 'OPTIONS', { family: 'public', reject: false })
          if (problem) problems.push(`preflight from ${origin} for ${requested.slice(0, 10)}: ${problem}`)
        }
      }
      problems.push(...await property(fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'), fc.array(fc.oneof(fc.constantFrom('v1', 'api', 'mcp', 'console', 'oauth', 'tools', 'projects', P, '..', '%2e%2e', '%00', '%ED%A0%80', '%'), fc.string({ maxLength: 12 }).map(encodeURIComponent)), { maxLength: 6 })), RUNS * 2, async ([method, segments]) => {
        const url = `/${segments.join('/')}`
        const res = await send({ method, url, headers: bearer(ws.keys.service) })
        // Unknown paths and methods are the app's 404 and 405, in the error shape, wherever they are.
        const family: Family = url.startsWith('/console') || url.startsWith('/oauth/authorize') ? 'console' : /^\/oauth\/(token|register|revoke)\/?$/.test(url) && method === 'POST' ? 'oauth' : 'public'
        const problem = judge(res, method, { family, reject: false })
        return problem && `${method} ${url}: ${problem}`
      }))
      return problems
    })
    function defaults(url: string): Record<string, string> {
      return { project_id: P, project: P, event_id: opp, id: url.startsWith('/v1/memories') ? memory : url.includes('/keys/') ? spareKey.id : url.includes('/connections/') ? grantId : opp, name: 'get_overview', file: 'console.css' }
    }
  })

  // ---------------------------------------------------------------------------------------

  await t.test('headers: bad credentials, media types, hosts and origins, and noise', async (t) => {
    const unknownKey = generateKey('service')
    const base64 = (s: string) => Buffer.from(s).toString('base64')
    /** Authorization values no surface accepts. */
    const badAuthorizations = (key: string) => [
      '', 'Bearer', 'Bearer ', `Bearer  ${key}x`, `Basic ${base64('user:pass')}`, 'Basic %%%', `Token ${key}`, key, `Bearer ${key.slice(0, -1)}`,
      `Bearer ${key} ${key}`, `Bearer ${'a'.repeat(8000)}`, `Bearer ${unknownKey}`, `Bearer ${revoked.key}`, `Bearer ${key.slice(0, 4)}${'A'.repeat(38)}`,
      `Bearer ${key}\u00e9`, `Bearer ${tokens.refresh_token}`, `Bearer ${unspentCode}`, `${key.slice(0, 4)}`, 'Bearer null', 'Bearer undefined', `Bearer ${key},${key}`,
    ]
    const kindKeys: Record<string, string> = { mcp: ws.keys.mcp, service: ws.keys.service, ingest: ws.keys.ingest, oauth: tokens.access_token }
    /** Credentials that are valid but must not do what the target does: wrong kind, read-only, a viewer's, narrowed to another project, another workspace's. */
    function refusedCredentials(target: Target): string[] {
      const out = Object.entries(kindKeys).filter(([kind]) => !target.kinds.includes(kind)).map(([, key]) => `Bearer ${key}`)
      const name = target.op ?? ''
      if (writes(name)) {
        const mcpish = target.kinds[0] === 'mcp'
        out.push(`Bearer ${mcpish ? readOnlyMcp : readOnlyService}`)
        // What a viewer may do is not refused to one: any member creates a project (and owns it),
        // saves and deletes their own views; the others need more than viewer.
        if (operationOf(name)?.role !== 'viewer') out.push(`Bearer ${mcpish ? viewer.keys.mcp : viewer.keys.service}`)
        // A narrowed key reaches only its project; the workspace's tool switches are not a project's,
        // and events sent without a project go to the key's own.
        if (name !== 'set_tool_enabled' && name !== 'ingest_events') out.push(`Bearer ${mcpish ? narrowedMcp : narrowedService}`)
        // Another workspace's key reaches none of our records: a project, or one the call names by id.
        const namesRecord = Object.values(valid[name] ?? {}).some((x) => typeof x === 'string' && /^(opp|mem|whk|msg|key)_/.test(x))
        if (operationOf(name)?.scope === 'project' || namesRecord) out.push(`Bearer ${mcpish ? other.keys.mcp : other.keys.service}`)
      }
      return out
    }
    const refusedTypes = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/jsonx', 'json', 'text/json', 'application/octet-stream', undefined]
    const legal = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 60 })
    const pick = (...values: string[]) => fc.oneof(fc.constantFrom(...values), legal)
    const noiseArb = (target: Target, readOnly: boolean) => {
      const key = target.key ?? ws.keys.service
      const names: Record<string, fc.Arbitrary<string>> = {
        accept: pick('', '*/*', 'text/html', 'application/xml', 'application/json;q=0', 'text/event-stream', 'x'.repeat(4000)),
        'mcp-protocol-version': pick('', '2024-01-01', '2025-11-25', '2026-07-28', '1', 'x'.repeat(1000)),
        'mcp-method': pick('tools/call', 'tools/list', 'nope', ''),
        'mcp-name': pick('get_overview', 'add_memory', 'nope', ''),
        cookie: pick('', 'gd_session=forged', 'a=b; a=c', `gd_session=${'x'.repeat(4000)}`),
        'x-forwarded-for': pick('1.2.3.4', 'evil', ''),
        [`x-${'a'.repeat(8)}`]: legal,
        ...(target.family === 'mcp'
          ? {}
          : {
              origin: pick('http://evil.example', 'null', PUBLIC_URL, ''),
              host: pick('evil.example', MCP_HOST, 'localhost', ''),
            }),
        ...(readOnly
          ? {
              'x-service-project': pick(P, other.project.id, 'no-such', 'x'.repeat(101), ''),
              authorization: fc.oneof(fc.constantFrom(`bearer ${key}`, `Bearer   ${key}  `, `BEARER ${key}`, `Bearer\u00a0${key}`, ...badAuthorizations(key)), legal),
              ...(target.bodySchema ? { 'content-type': pick('application/json; charset=utf-8', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json;;;', 'application/json, text/plain', ...refusedTypes.filter((x) => x !== undefined)) } : {}),
              ...(target.family === 'mcp' ? { host: pick('evil.example', MCP_HOST, 'localhost:3000', ''), origin: pick('http://evil.example', 'null', PUBLIC_URL, '') } : {}),
            }
          : {}),
      }
      return fc.dictionary(fc.constantFrom(...Object.keys(names)), fc.constant(null), { maxKeys: 4 }).chain((chosen) =>
        fc.record(Object.fromEntries(Object.keys(chosen).map((n) => [n, names[n]!])) as Record<string, fc.Arbitrary<string>>))
    }
    // The MCP targets: a read and a write in each era (the headers are read before any tool runs).
    const targets = [...apiTargets, ...mcpTargets.filter((x) => ['get_overview', 'add_memory'].includes(x.op!))]
    /** Headers every target must refuse, whatever else it is sent. */
    const refusalsOf = (target: Target): [string, Record<string, string | undefined>][] => [
      ...badAuthorizations(target.key ?? ws.keys.service).map((v): [string, Record<string, string | undefined>] => [`Authorization: ${JSON.stringify(v.slice(0, 40))}`, { authorization: v }]),
      ...refusedCredentials(target).map((v): [string, Record<string, string | undefined>] => [`a refused credential ${v.slice(0, 11)}…`, { authorization: v }]),
      ...(target.bodySchema && target.family === 'api' ? refusedTypes.map((v): [string, Record<string, string | undefined>] => [`Content-Type: ${v ?? '(none)'}`, { 'content-type': v }]) : []),
      ...(target.family === 'mcp' ? ['evil.example', '127.0.0.1:3001', 'localhost.evil.example', '', 'x'.repeat(300)].map((v): [string, Record<string, string | undefined>] => [`Host: ${v.slice(0, 30)}`, { host: v }]) : []),
      ...(target.family === 'mcp' ? ['http://evil.example', 'null', `${PUBLIC_URL}.evil.example`, 'x'].map((v): [string, Record<string, string | undefined>] => [`Origin: ${v}`, { origin: v }]) : []),
    ]
    let rotation = 0
    for (const group of chunks(targets, 16)) {
      await batch(t, `headers: ${group.map((g) => g.label).join(', ')}`, async () => {
        const problems: string[] = []
        for (const target of group) {
          const readOnly = !writes(target.op ?? '')
          const method = String(target.request().method)
          const refusals = refusalsOf(target)
          // Each refusal goes to every third target (all of them from FUZZ_RUNS=100), then random ones with noise beside them.
          for (const [i, [label, headers]] of refusals.entries()) {
            if (!EVERY_SURFACE && (i + rotation) % 3 !== 0) continue
            const problem = judge(await send(target.request({ headers })), method, { family: target.family, reject: true })
            if (problem) problems.push(`${target.label} ${label}: ${problem}`)
          }
          rotation++
          problems.push(...await property(fc.tuple(fc.constantFrom(...refusals), noiseArb(target, readOnly)), Math.ceil(RUNS / 2), async ([[label, refusal], noise]) => {
            const problem = judge(await send(target.request({ headers: { ...noise, ...refusal } })), method, { family: target.family, reject: true })
            return problem && `${target.label} ${label} with ${JSON.stringify(noise).slice(0, 200)}: ${problem}`
          }))
          // A read may be sent anything, valid credentials or not: it answers, or refuses in the error shape.
          if (readOnly) {
            problems.push(...await property(noiseArb(target, true), Math.ceil(RUNS / 2), async (noise) => {
              const problem = judge(await send(target.request({ headers: noise })), method, { family: target.family, reject: false })
              return problem && `${target.label} with ${JSON.stringify(noise).slice(0, 200)}: ${problem}`
            }))
          }
        }
        return problems
      })
    }
  })

  await t.test('over a real socket: duplicated, unparseable and oversized headers', async (t) => {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const port = (app.server.address() as net.AddressInfo).port
    const raw = (head: string, body = '') => new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1')
      const chunks: Buffer[] = []
      socket.on('data', (c) => chunks.push(c))
      socket.on('error', reject)
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('latin1')
        const [headers = '', ...rest] = text.split('\r\n\r\n')
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') })
      })
      // Written, not ended: a client that half-closes its side may see its request dropped (Node
      // aborts it); with Connection: close the server closes once it has answered.
      socket.setTimeout(30_000, () => socket.destroy())
      socket.write(Buffer.concat([Buffer.from(`${head}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`, 'latin1'), Buffer.from(body)]))
    })
    const line = (name: string, value: string) => `${name}: ${value}\r\n`
    const get = (path: string, headers: string) => raw(`GET ${path} HTTP/1.1\r\nHost: ${MCP_HOST}\r\n${headers}`)
    const postTool = (headers: string, body = `{"project":"${P}"}`) => raw(`POST /v1/tools/get_overview HTTP/1.1\r\nHost: ${MCP_HOST}\r\n${headers}`, body)
    await batch(t, 'raw requests', async () => {
      const problems: string[] = []
      const expect = async (label: string, res: Promise<{ status: number; headers: string; body: string }>, ok: (status: number) => boolean) => {
        const r = await res
        if (r.status >= 500 || r.status === 0 || !(ok(r.status) || r.status === 429)) problems.push(`${label}: ${r.status} ${r.body.slice(0, 200)}`)
        else if (r.status >= 400 && /content-type: application\/json/i.test(r.headers) && errorShapeProblem(parse(r.body))) problems.push(`${label}: ${errorShapeProblem(parse(r.body))}: ${r.body.slice(0, 200)}`)
      }
      const good = line('Authorization', `Bearer ${ws.keys.service}`)
      const bad = line('Authorization', 'Bearer nope')
      await expect('Authorization twice, the good one first (Node keeps the first)', get('/v1/projects', good + bad), (s) => s === 200)
      await expect('Authorization twice, the bad one first', get('/v1/projects', bad + good), (s) => s === 401)
      await expect('Content-Type twice', postTool(good + line('Content-Type', 'text/plain') + line('Content-Type', 'application/json')), (s) => s === 415)
      await expect('X-Service-Project twice (joined with a comma)', postTool(good + line('Content-Type', 'application/json') + line('X-Service-Project', P) + line('X-Service-Project', P), '{}'), (s) => s === 404 || s === 400)
      await expect('Host twice on /mcp', raw(`POST /mcp HTTP/1.1\r\nHost: evil.example\r\nHost: ${MCP_HOST}\r\n${good}${line('Content-Type', 'application/json')}`, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), (s) => s === 403 || s === 400)
      await expect('a control character in a header', get('/v1/projects', good + line('X-Evil', 'a\u0001b')), (s) => s === 400)
      await expect('a header over 16 KiB', get('/v1/projects', good + line('X-Big', 'x'.repeat(17_000))), (s) => s === 431)
      await expect('latin-1 bytes in Authorization', get('/v1/projects', line('Authorization', `Bearer ${ws.keys.service}\u00ff`)), (s) => s === 401)
      await expect('a header without a colon', get('/v1/projects', `${good}NoColonHere\r\n`), (s) => s === 400)
      await expect('an obsolete folded header', get('/v1/projects', `${good}X-Folded: a\r\n b\r\n`), (s) => s === 400 || s === 200)
      problems.push(...await property(fc.array(fc.tuple(fc.constantFrom('Authorization', 'Content-Type', 'Accept', 'Cookie', 'Host', 'Origin', 'X-Service-Project', 'Mcp-Protocol-Version', 'X-Any'), fc.string({ unit: fc.integer({ min: 0, max: 0xff }).filter((c) => c !== 10 && c !== 13).map((c) => String.fromCharCode(c)), maxLength: 40 })), { maxLength: 4 }), RUNS, async (headers) => {
        const r = await postTool(headers.map(([n, v]) => line(n, v)).join(''))
        return r.status >= 500 || r.status === 0 ? `${JSON.stringify(headers)}: ${r.status} ${r.body.slice(0, 200)}` : null
      }))
      return problems
    })
  })

  await t.test('every route was fuzzed', async (t) => {
    const missing = routes.map(routeKey).filter((k) => !reached.has(k) && !(k in NOT_FUZZED))
    t.same(missing, [], `${routes.length} routes, each reached by fuzzed requests (or listed in NOT_FUZZED with a reason)`)
    for (const k of Object.keys(NOT_FUZZED)) t.ok(routes.some((r) => routeKey(r) === k), `NOT_FUZZED lists ${k}, which exists`)
    t.comment(`${sent} requests`)
    // A 429 is a fine answer, but a fuzzer slowed down on most requests reaches no handler: rate
    // limits must be set high enough for this test's app.
    t.ok(slowedDown <= sent * 0.02, `${slowedDown} of ${sent} requests were answered 429`)
  })
})

/** Whole bodies that are not an object of arguments: [label, JSON text, whether the request is bad]; `big` adds one over the 1 MiB limit. */
function wholeBodies(base: unknown, big: boolean): [string, string, boolean][] {
  const fields = jsonText(base).slice(1)
  const rest = fields === '}' ? '}' : `,${fields}`
  return [
    ['body = []', '[]', true],
    ['body = "x"', '"x"', true],
    ['body = 7', '7', true],
    ['body = null', 'null', false],
    ['malformed JSON', jsonText(base).slice(0, -1), true],
    ['a __proto__ key', `{"__proto__":{"x":1}${rest}`, true],
    ['a constructor.prototype key', `{"constructor":{"prototype":{"x":1}}${rest}`, true],
    ['nested 5,000 deep', `${'['.repeat(5000)}${']'.repeat(5000)}`, true],
    ...(big ? [['1 MiB and more', `{"x":"${'x'.repeat(1024 * 1024)}"}`, true] as [string, string, boolean]] : []),
  ]
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size))
  return out
}

function dropUndefined(headers: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>
}
