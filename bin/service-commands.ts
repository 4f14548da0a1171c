// `growthdesk tools` and `growthdesk call`: the tools REST API of a running service, over
// HTTP, with SERVICE_URL, SERVICE_API_KEY and optional SERVICE_PROJECT (spec 4.4).
import { defineCommand, type Invocation } from './command.ts'
import { firstSentence } from '../docs/agent-docs.ts'

/** Said in the help of every command that takes a key. */
export const KEY_NEEDED =
  'Key: a service key (gds_) in SERVICE_API_KEY — the tools REST API (/v1) takes no other kind; a gdm_ key gets ' +
  '401 "This endpoint takes a service key (gds_) or OAuth access token (gdo_); a project-side MCP API key (gdm_) was sent." Make one in the console (Keys) or with admin create-key --kind service.'

interface Service {
  url: string
  key: string
}

function service(inv: Invocation): Service {
  const url = inv.io.env.SERVICE_URL?.trim()
  const key = inv.io.env.SERVICE_API_KEY?.trim()
  if (!url) inv.usage('SERVICE_URL is not set: export SERVICE_URL=http://127.0.0.1:3000 (the service address).')
  if (!/^https?:\/\/[^\s/]+/.test(url)) inv.usage(`SERVICE_URL=${url} is not an http(s) URL.`)
  if (!key) inv.usage('SERVICE_API_KEY is not set: export SERVICE_API_KEY=gds_… (a service key from the console).')
  return { url: url.replace(/\/+$/, ''), key }
}

async function request(inv: Invocation, svc: Service, path: string, init: { method: string; body?: unknown; project?: string }) {
  const target = `${svc.url}${path}`
  let res: Response
  try {
    res = await fetch(target, {
      method: init.method,
      headers: {
        authorization: `Bearer ${svc.key}`,
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.project ? { 'x-service-project': init.project } : {}),
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(60_000),
    })
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    inv.fail(`cannot reach ${target}: ${cause?.code ?? cause?.message ?? (err as Error).message}`)
  }
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    inv.fail(`${target} answered ${res.status} with something that is not JSON.`)
  }
  return { ok: res.ok, status: res.status, body }
}

/** A tool error: the error object itself on stderr (scripts can parse it), exit 1. */
function toolError(inv: Invocation, body: unknown): number {
  inv.io.stderr.write(`${JSON.stringify(body)}\n`)
  return 1
}

interface Contract {
  name: string
  description: string
  annotations?: { readOnlyHint?: boolean }
}

const tools = defineCommand({
  path: ['tools'],
  summary: 'List the tools of a running service (SERVICE_URL, SERVICE_API_KEY=gds_…).',
  details: [KEY_NEEDED],
  options: { json: { type: 'boolean', description: 'print the raw listing as JSON' } },
  async run(inv) {
    const res = await request(inv, service(inv), '/v1/tools', { method: 'GET' })
    if (!res.ok) return toolError(inv, res.body)
    if (inv.options.json) {
      inv.io.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`)
      return 0
    }
    const list = (res.body as { tools: Contract[] }).tools
    const width = Math.max(4, ...list.map((t) => t.name.length))
    const lines = [`${'TOOL'.padEnd(width)}  MODE   WHAT IT DOES`]
    for (const t of list) lines.push(`${t.name.padEnd(width)}  ${t.annotations?.readOnlyHint ? 'read ' : 'write'}  ${firstSentence(t.description)}`)
    lines.push('', `${list.length} tools. Details: growthdesk tools --json, or GET /v1/tools/<name>.`)
    inv.io.stdout.write(`${lines.join('\n')}\n`)
    return 0
  },
})

const call = defineCommand({
  path: ['call'],
  summary: "Call a tool of a running service: growthdesk call <tool> --json '<arguments>'.",
  details: [
    KEY_NEEDED,
    'Prints the result as JSON. A tool error prints the error object on stderr and exits 1.',
    'The project: "project" in the arguments, else --project, else SERVICE_PROJECT (both sent as X-Service-Project).',
  ],
  positionals: ['TOOL'],
  options: {
    json: { type: 'string', value: 'ARGS', description: 'the arguments as a JSON object (default {})' },
    project: { type: 'string', value: 'PROJECT', description: 'project id or slug (sent as X-Service-Project)' },
  },
  async run(inv) {
    const svc = service(inv)
    let args: unknown = {}
    if (inv.options.json !== undefined) {
      try {
        args = JSON.parse(inv.options.json)
      } catch (err) {
        inv.usage(`--json is not valid JSON: ${(err as Error).message}`)
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) inv.usage('--json must be a JSON object, e.g. {"window":"7d"}.')
    }
    const body = args as Record<string, unknown>
    // As a header, the project selects without being an argument: tools that take none ignore it.
    const project = inv.options.project ?? (inv.io.env.SERVICE_PROJECT?.trim() || undefined)
    const tool = inv.args.TOOL
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(tool)) inv.usage(`'${tool}' is not a tool name (snake_case).`)
    const res = await request(inv, svc, `/v1/tools/${tool}`, { method: 'POST', body, project })
    if (!res.ok) return toolError(inv, res.body)
    inv.io.stdout.write(`${JSON.stringify((res.body as { result: unknown }).result, null, 2)}\n`)
    return 0
  },
})

export const serviceCommands = [tools, call]
