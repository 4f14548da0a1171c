import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventStream } from '../schemas/metrics.ts'

/** The cursor is opaque to clients: the (occurred_at, id) of the last event of a page. */
const encodeCursor = (at: Date, id: number) => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url')

function decodeCursor(cursor: string): { at: Date; id: number } {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  const at = new Date(iso ?? '')
  const n = Number(id)
  // Years 1–9999 only: JavaScript dates reach further than PostgreSQL timestamps (a 500 otherwise).
  const year = at.getUTCFullYear()
  if (Number.isNaN(at.getTime()) || year < 1 || year > 9999 || !Number.isSafeInteger(n)) {
    throw appError('InvalidArguments', 'The cursor `before` is not one this API returned.', [{ path: 'before', message: 'is not a valid cursor' }])
  }
  return { at, id: n }
}

export default defineOperation({
  name: 'get_event_stream',
  title: 'Your recent raw events',
  description:
    'Events of your own: your recent raw events in the project (distinct_id = your identity there), newest first; ' +
    '`before` = `next_cursor` pages back. Checks that your tracking arrives.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
      before: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The last page\'s next_cursor.' })),
    },
    { additionalProperties: false }
  ),
  output: EventStream,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Your 20 most recent events', args: {} },
      { title: 'Older ones: 50 before a page’s next_cursor', args: { limit: 50, before: 'MjAyNi0xMS0yMFQwODoxNTowMC4wMDBafDQ4MTI' } },
    ],
    invalid: [
      { title: 'No events at all', args: { limit: 0 }, field: 'limit' },
      { title: 'The limit as text', args: { limit: '50' }, field: 'limit' },
      { title: 'A cursor this API did not return', args: { before: 'not-a-cursor' }, field: 'before' },
    ],
  },
  async handler(args, ctx) {
    const limit = args.limit ?? 20
    const before = args.before ? decodeCursor(args.before) : undefined
    const [rows, since] = await Promise.all([
      ctx.repos.events.stream(ctx.project.id, ctx.project.distinctId, limit + 1, before),
      ctx.repos.partitions.rawEventsSince(ctx.project.id),
    ])
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return {
      distinct_id: ctx.project.distinctId,
      items: page.map((r) => ({
        uuid: r.uuid,
        event: r.event,
        distinct_id: r.distinctId,
        timestamp: r.occurredAt.toISOString(),
        received_at: r.receivedAt.toISOString(),
        properties: r.properties as Record<string, unknown>,
      })),
      next_cursor: rows.length > limit && last ? encodeCursor(last.occurredAt, last.id) : null,
      raw_events_since: since,
    }
  },
})
