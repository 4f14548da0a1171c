// What the triage suites (tags, assignees) share: a tool call over /v1/tools and over MCP, the
// webhook messages queued, and the check that a filtered listing's pages, cursors and totals are
// exactly the full listing filtered.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { sql } from '../../db/orm.ts'
import { rowsOf } from '../../db/client.ts'
import { bearer, PUBLIC_URL } from './app.ts'

export interface Answer {
  status: number
  body: { result?: any; error?: { code: string; message: string; details?: { path: string; message: string }[] } }
}

/** A tool call over REST (/v1/tools): the status and the body. */
export async function rest(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  return { status: res.statusCode, body: res.json() }
}

/** The same call over MCP (2025-11-25): a result's structuredContent, or an error's JSON text with its status. */
export async function mcp(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host: new URL(PUBLIC_URL).host, ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  const text = res.body.startsWith('{') ? res.body : /^data: (.*)$/m.exec(res.body)![1]!
  const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } }
  if (!result.isError) return { status: 200, body: { result: result.structuredContent } }
  const body = JSON.parse(result.content[0]!.text) as Answer['body']
  const status = { invalid_arguments: 400, not_found: 404, conflict: 409, review_access_required: 403, forbidden: 403 }[body.error!.code] ?? 500
  return { status, body }
}

/** The messages queued for the project's webhooks, oldest first: type and data. */
export async function queued(app: FastifyInstance, projectId: string, type?: string): Promise<{ type: string; data: any }[]> {
  const rows = rowsOf<{ type: string; payload: { data: unknown } }>(await app.db.execute(sql`
    select d.type, d.payload from webhook_deliveries d join webhooks w on w.id = d.webhook_id
    where w.project_id = ${projectId} ${type ? sql`and d.type = ${type}` : sql``} order by d.created_at, d.id`))
  return rows.map((r) => ({ type: r.type, data: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload).data }))
}

interface Page { items: { event_id: string }[]; page: number; page_size: number; total: number; total_pages: number; next_cursor: string | null }

/**
 * The listing with `query` (its filters) is exactly the full listing filtered by `keep`: the same
 * items in the same order by cursor and by page number (page size `size`), the same totals,
 * next_cursor on every page but the last.
 */
export async function checkFiltered(t: Test, app: FastifyInstance, key: string, projectId: string, query: string, keep: (o: any) => boolean, size = 3) {
  const url = `/api/v1/mcp/projects/${projectId}/opportunities`
  const page = async (q: string): Promise<Page> => {
    const res = await app.inject({ method: 'GET', url: `${url}?${q}`, headers: bearer(key) })
    if (res.statusCode !== 200) throw new Error(`${q}: ${res.statusCode} ${res.body}`)
    return res.json() as Page
  }
  const all = await page('page_size=100')
  if (all.total > 100) throw new Error('more than 100: not a test fixture')
  const expected = all.items.filter(keep).map((o) => o.event_id)
  const byCursor: Page[] = [await page(`${query}&page_size=${size}`)]
  while (byCursor.at(-1)!.next_cursor) byCursor.push(await page(`${query}&page_size=${size}&after=${byCursor.at(-1)!.next_cursor}`))
  const pages = Math.max(1, Math.ceil(expected.length / size))
  const byNumber: Page[] = []
  for (let n = 1; n <= pages; n++) byNumber.push(await page(`${query}&page_size=${size}&page=${n}`))
  t.same(byCursor.flatMap((p) => p.items.map((o) => o.event_id)), expected, `${query}: by cursor, the full listing filtered (${expected.length})`)
  t.same(byNumber.map((p) => p.items.map((o) => o.event_id)), byCursor.map((p) => p.items.map((o) => o.event_id)), `${query}: by page number, the same pages`)
  t.ok([...byCursor, ...byNumber].every((p) => p.total === expected.length && p.total_pages === Math.ceil(expected.length / size)), `${query}: totals ${expected.length}`)
  t.same(byNumber.map((p) => p.next_cursor === null), byNumber.map((_, i) => i === byNumber.length - 1), `${query}: next_cursor on every page but the last`)
  t.same((await page(`${query}&page_size=${size}&page=${pages + 1}`)).items, [], `${query}: past the end`)
  return expected
}
