import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { OpportunityFilters, OpportunityPage } from '../schemas/opportunities.ts'
import { localDate } from '../core/time.ts'
import type { ListKey } from '../db/repositories/opportunities.ts'
import { listingWho } from './triage-args.ts'

/**
 * The cursor is opaque to clients: the place (received_at to the microsecond, event_id) of the
 * last item of a page, and the number of the page it leads to (so `page` stays meaningful).
 */
const encodeCursor = (key: ListKey, page: number) => Buffer.from(`${key.at}|${key.id}|${page}`).toString('base64url')

const AT = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const ID = /^opp_[0-9A-Za-z]{1,40}$/

function decodeCursor(cursor: string): { key: ListKey; page: number } {
  const [at = '', id = '', page = ''] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  const n = Number(page)
  // A real calendar time (the millisecond part round-trips through Date) in years 1–9999, as
  // PostgreSQL would otherwise answer a bad one with an error (a 500).
  const year = Number(AT.exec(at)?.[1] ?? 0)
  const date = new Date(`${at.slice(0, 23)}Z`)
  const valid = year >= 1 && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 23) === at.slice(0, 23)
  if (!valid || !ID.test(id) || !Number.isSafeInteger(n) || n < 2) {
    throw appError('InvalidArguments', 'The cursor `after` is not one this API returned.', [{ path: 'after', message: 'is not a valid cursor' }])
  }
  return { key: { at, id }, page: n }
}

export default defineOperation({
  name: 'list_opportunities',
  title: 'List growth opportunities',
  description:
    'Growth opportunities of a project, newest first, with their review state; filter by `type`, `date`, `tag`, `assignee`, ' +
    '`evaluation`, `status` and text `q`, page with `page`/`page_size` or `after` = `next_cursor`. Needs review ' +
    'access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(OpportunityFilters, { additionalProperties: false }),
  output: OpportunityPage,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // MCP App hosts show the page as a triage board (routes/mcp-apps.ts); the text stays for the model.
  ui: { resourceUri: 'ui://growthdesk/board' },
  examples: {
    valid: [
      { title: 'The opportunities waiting for review, 50 a page', args: { status: 'pending', page_size: 50 } },
      { title: 'Partnership leads received today, evaluated useful, that mention pricing', args: { type: 'partnership', date: 'today', evaluation: 'useful', q: 'pricing' } },
      {
        title: 'The next page: `after` is the previous page’s next_cursor',
        args: { status: 'pending', page_size: 50, after: 'MjAyNi0xMS0xOVQxNjo0MjowNy4xMjM0NTZafG9wcF8yeDdLcTlMbVZiNE5jOFJ0MVl3M3wy' },
      },
    ],
    invalid: [
      { title: 'A status that does not exist', args: { status: 'open' }, field: 'status' },
      { title: 'More than 100 a page', args: { page_size: 101 }, field: 'page_size' },
      { title: 'An empty search', args: { q: '' }, field: 'q' },
      { title: 'A cursor this API did not return', args: { after: 'bm90IGEgY3Vyc29y' }, field: 'after' },
      { title: 'An argument it does not take', args: { sort: 'newest' }, field: 'sort' },
    ],
  },
  async handler(args, ctx) {
    const cursor = args.after !== undefined ? decodeCursor(args.after) : undefined
    // With a cursor, `page` (1 by default, so a sent 1 cannot be told from none) is not used:
    // the cursor carries the number of the page it leads to.
    const page = cursor?.page ?? args.page ?? 1
    const pageSize = args.page_size ?? 20
    const timeZone = ctx.project.timezone
    const { items, total, next } = await ctx.repos.opportunities.list(ctx.project.id, {
      type: args.type ?? 'all',
      status: args.status ?? 'all',
      evaluation: args.evaluation ?? 'all',
      receivedOn: args.date === 'today' ? { day: localDate(ctx.now(), timeZone), timeZone } : undefined,
      q: args.q,
      ...listingWho(args, ctx),
      page,
      pageSize,
      after: cursor?.key,
    })
    return {
      items,
      page,
      page_size: pageSize,
      total,
      total_pages: Math.ceil(total / pageSize),
      next_cursor: next ? encodeCursor(next, page + 1) : null,
    }
  },
})
