import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { invalidArguments } from '../core/errors.ts'
import { IncomingEvent, IngestResult } from '../schemas/metrics.ts'

export const MAX_BATCH = 1000
const MAX_AHEAD_MS = 24 * 60 * 60 * 1000

export default defineOperation({
  name: 'ingest_events',
  title: 'Record user events',
  description:
    'Record a batch of up to 1000 user events (`signup`, `daily_use`, or any name). The whole batch is validated first; ' +
    'one bad event rejects it all. Idempotent by `uuid`: a resent event is counted as a duplicate. Returns {accepted, duplicates}.',
  scope: 'project',
  role: 'reviewer',
  tool: false,
  input: Type.Object({ events: Type.Array(IncomingEvent, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false }),
  output: IngestResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      {
        title: 'A signup and a day of use, each with its uuid so a resend is not counted twice',
        args: {
          events: [
            { event: 'signup', distinct_id: 'ada@example.com', timestamp: '2025-06-09T09:30:00+02:00', uuid: '0197548c-2f6a-7b1e-9c3d-4e5f60718293', properties: { plan: 'pro', source: 'newsletter' } },
            { event: 'daily_use', distinct_id: 'ada@example.com', timestamp: '2025-06-09T10:05:00+02:00', uuid: '0197548c-2f6a-7b1e-9c3d-4e5f60718294' },
          ],
        },
      },
      { title: 'One event, at the time it arrives', args: { events: [{ event: 'daily_use', distinct_id: 'user-1842' }] } },
    ],
    invalid: [
      { title: 'No events', args: { events: [] }, field: 'events' },
      { title: 'An event without its user', args: { events: [{ event: 'signup' }] }, field: 'events[0].distinct_id' },
      { title: 'A time without a date', args: { events: [{ event: 'signup', distinct_id: 'ada@example.com', timestamp: '09:30' }] }, field: 'events[0].timestamp' },
      { title: 'A uuid that is not one', args: { events: [{ event: 'signup', distinct_id: 'ada@example.com', uuid: '42' }] }, field: 'events[0].uuid' },
    ],
  },
  async handler(args, ctx) {
    const now = ctx.now()
    const limit = now.getTime() + MAX_AHEAD_MS
    const problems: { path: string; message: string }[] = []
    const batch = args.events.map((e, i) => {
      const at = e.timestamp ? new Date(e.timestamp) : now
      // RFC 3339 allows what a Date or PostgreSQL cannot hold (leap second 23:59:60, year 0000).
      const valid = !Number.isNaN(at.getTime()) && at.getUTCFullYear() >= 1
      if (!valid) problems.push({ path: `events[${i}].timestamp`, message: 'is not a storable date-time (years 0001–9999, no leap second)' })
      else if (at.getTime() > limit) problems.push({ path: `events[${i}].timestamp`, message: 'is more than 24 hours in the future' })
      return {
        uuid: e.uuid?.toLowerCase() ?? randomUUID(),
        event: e.event,
        distinct_id: e.distinct_id,
        timestamp: valid ? at.toISOString() : '',
        properties: e.properties ?? {},
      }
    })
    if (problems.length) throw invalidArguments(problems)
    return ctx.repos.events.ingest(ctx.project.id, batch, now)
  },
})
